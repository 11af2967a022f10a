"""`report.html`: one self-contained page (styles inline, figures embedded as base64 PNG).

The verdict and the headline table come first, then each model's diagnosis; then the difference, cost,
the validation score against training time, tuning (with `--tune`), figures, per-class (or per-label) scores, the
examples the models get wrong, and the settings.
"""

from __future__ import annotations

import base64
import html

from compare.render import tables
from compare.render.faithfulness import faithfulness_html
from compare.render.figures import figure_title
from compare.render.outline import outline
from compare.render.tables import Table

STYLE = """
:root { --ink: #1f2933; --muted: #6b7785; --line: #e3e8ee; --accent: #3b6fb6; --win: #2f7d4f; --even: #8a6d1f; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
       background: #f5f7fa; }
main { max-width: 1120px; margin: 0 auto; padding: 32px 28px 64px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 36px 0 10px; padding-bottom: 6px; border-bottom: 1px solid var(--line); }
.sub { color: var(--muted); margin: 0 0 20px; }
.verdict { border-radius: 10px; padding: 16px 20px; margin: 18px 0 24px; background: white;
           border-left: 6px solid var(--even); box-shadow: 0 1px 3px rgba(0,0,0,.06); }
.verdict.win { border-left-color: var(--win); }
.verdict .head { font-size: 20px; font-weight: 650; }
.verdict.win .head { color: var(--win); } .verdict.even .head { color: var(--even); }
.card { background: white; border-radius: 10px; padding: 14px 18px; margin: 14px 0;
        box-shadow: 0 1px 3px rgba(0,0,0,.06); overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { text-align: left; padding: 7px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); font-weight: 600; }
tr.muted td { color: var(--muted); font-style: italic; }
tr:last-child td { border-bottom: none; }
td.text { max-width: 520px; }
.note { color: var(--muted); font-size: 13px; margin: 8px 0 0; }
.ok { color: var(--win); } .bad { color: #b23b3b; }
figure { margin: 0; } figure img { max-width: min(100%, 980px); height: auto; display: block; margin: 0 auto; }
figcaption { color: var(--muted); font-size: 13px; margin-top: 6px; text-align: center; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(440px, 1fr)); gap: 14px; }
.grid .card { margin: 0; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 0; font-size: 13px; }
dt { color: var(--muted); } dd { margin: 0; word-break: break-all; }
"""


def _cell(text: str, column: str) -> str:
    escaped = html.escape(str(text))
    if text.startswith("✓"):
        return f'<td class="ok">{escaped}</td>'
    if text.startswith("✗"):
        return f'<td class="bad">{escaped}</td>'
    return f'<td class="text">{escaped}</td>' if column == "text" else f"<td>{escaped}</td>"


def html_table(table: Table, heading: bool = True) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in table.header)
    body = []
    for i, row in enumerate(table.rows):
        css = ' class="muted"' if i in table.muted_rows else ""
        body.append(f"<tr{css}>" + "".join(_cell(c, h) for c, h in zip(row, table.header)) + "</tr>")
    title = f"<h2>{html.escape(table.title)}</h2>" if heading else ""
    note = f'<p class="note">{html.escape(table.note)}</p>' if table.note else ""
    return f'{title}<div class="card"><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>{note}</div>'


def _figure(name: str, png: bytes) -> str:
    data = base64.b64encode(png).decode("ascii")
    title = html.escape(figure_title(name))
    return f'<div class="card"><figure><img src="data:image/png;base64,{data}" alt="{title}"><figcaption>{title}</figcaption></figure></div>'


def render_html(results: dict, analysis: dict, figures: dict[str, bytes]) -> str:
    c = results["comparison"]
    names = " vs ".join(results["models"])
    kind = "win" if c["winner"] else "even"
    head, reason = tables.verdict(results)
    titles = tables.model_titles(results)
    parts = [
        f"<h1>{html.escape(names)}</h1>",
        f'<p class="sub">{html.escape(results["split"])} split of {html.escape(results["data"]["source"])}: '
        f"{results['n']:,} examples · report created {html.escape(results['created'])}</p>",
        f'<p class="sub">{html.escape(tables.task_line(results))}</p>',
        *([f'<p class="sub">{html.escape(titles)}</p>'] if titles else []),
        f'<div class="verdict {kind}"><div class="head">{html.escape(head)}</div><div>{html.escape(reason)}</div></div>',
        *outline(results, analysis, HtmlParts(figures)),
        _settings(results),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(names)} · {html.escape(results['split'])}</title><style>{STYLE}</style></head>"
        f"<body><main>{''.join(parts)}</main></body></html>\n"
    )


class HtmlParts:
    """The outline's parts as HTML (`compare.render.outline.Renderer`), the figures embedded: the wide ones (costs,
    confusion matrices, predicted against gold) one per row, the others in a grid."""

    def __init__(self, figures: dict[str, bytes]) -> None:
        self.pngs = figures

    def table(self, table: Table) -> list[str]:
        return [html_table(table)]

    def figure(self, name: str) -> list[str]:
        return [_figure(name, self.pngs[name])] if name in self.pngs else []

    def figures(self, skip: str) -> list[str]:
        figures = {name: png for name, png in self.pngs.items() if name != skip}
        wide = [
            n for n in figures if n.endswith("_vs_cost.png") or n in ("confusion_matrices.png", "predicted_vs_gold.png")
        ]
        grid = '<div class="grid">' + "".join(_figure(n, p) for n, p in figures.items() if n not in wide) + "</div>"
        return ["<h2>Figures</h2>", *(_figure(n, figures[n]) for n in wide), grid]

    def faithfulness(self, results: dict) -> list[str]:
        return [faithfulness_html(results, html_table)]


def _settings(results: dict) -> str:
    items = [("note", n) for n in results["data"]["notes"]]
    items += list(results["settings"].items())
    items += [(f"run {name}", path) for name, path in results["runs"].items()]
    items += [(key, value) for key, value in results["environment"].items()]
    rows = "".join(f"<dt>{html.escape(str(k))}</dt><dd>{html.escape(str(v))}</dd>" for k, v in items)
    return f'<h2>Settings and environment</h2><div class="card"><dl>{rows}</dl></div>'
