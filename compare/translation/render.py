"""`report.md` and the self-contained `report.html` of a translation report, from results.json's content.

The verdict and the scores come first, then the paired comparisons, the cost table, the figures, the
per-domain and per-length scores, the sentences where the systems differ most, and the settings.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path

from compare.render.format import count, size, training_time
from compare.render.html import STYLE, html_table
from compare.render.markdown import markdown_table
from compare.render.tables import Table
from compare.translation.figures import TITLES, scored_systems


def score(value: float | None, bounds: list[float] | None = None) -> str:
    """A BLEU or chrF++ score on sacrebleu's 0-100 scale, with its 95% interval when there is one."""
    if value is None:
        return "–"
    return f"{value:.1f} [{bounds[0]:.1f}, {bounds[1]:.1f}]" if bounds else f"{value:.1f}"


def _rate(value: float | None, unit: str = "/s") -> str:
    return "–" if value is None else f"{value:,.0f}{unit}" if value >= 10 else f"{value:.1f}{unit}"


def verdict(results: dict) -> tuple[str, str]:
    c = results["comparison"]
    return (f"{c['winner']} wins" if c["winner"] else "No clear winner"), c["verdict"]


def scores_table(results: dict) -> Table:
    rows, muted = [], set()
    for name, m in results["models"].items():
        what = architecture(m["arch"], m.get("teacher"))
        rows.append([name, score(m["bleu"], m["bleu_ci"]), score(m["chrf"], m["chrf_ci"]), what])
    for name, r in results["references"].items():
        muted.add(len(rows))
        rows.append([name, score(r["bleu"], r["bleu_ci"]), score(r["chrf"], r["chrf_ci"]), _ref_note(r)])
    greedy = [name for name, m in results["models"].items() if m.get("decoding", "greedy") == "greedy"]
    decoded = results["settings"]["decoding"]
    exceptions = f" ({', '.join(greedy)}: greedy)" if greedy and decoded != "greedy" else ""
    note = (
        f"Corpus sacreBLEU and chrF++ (0-100) on the {results['n']:,} {results['split']} sentences, {decoded} "
        f"decoding{exceptions}; intervals: 95% percentile bootstrap over sentences. Reference rows in italics."
    )
    return Table("Scores", ["system", "BLEU [95% CI]", "chrF++ [95% CI]", "what"], rows, muted, note)


def architecture(arch: str, teacher: str | None) -> str:
    """`encoder-decoder`, or `encoder-decoder, trained on bergamot's translations` for a distilled run."""
    return arch + (f", trained on {Path(teacher).name}'s translations" if teacher else "")


def _ref_note(ref: dict) -> str:
    return ref["description"] + (f"; {ref['note']}" if ref["note"] else "")


def comparisons_table(results: dict) -> Table:
    rows = [
        [
            f"{c['a']} − {c['b']}",
            f"{c['bleu_diff']:+.1f} [{c['bleu_diff_ci'][0]:+.1f}, {c['bleu_diff_ci'][1]:+.1f}]",
            f"{c['chrf_diff']:+.1f} [{c['chrf_diff_ci'][0]:+.1f}, {c['chrf_diff_ci'][1]:+.1f}]",
            f"{c['bleu_p']:.3g}",
            c["winner"] or "none",
        ]
        for c in results["comparisons"]
    ]
    header = ["pair (a − b)", "BLEU diff [95% CI]", "chrF++ diff [95% CI]", "p (BLEU)", "winner"]
    note = (
        "Paired bootstrap resampling (Koehn 2004): every system scored on the same resampled sentences. A winner "
        "is named only when the 95% interval of the BLEU difference excludes 0."
    )
    return Table("Paired comparisons", header, rows, note=note)


def cost_table(results: dict) -> Table:
    decoding = results["settings"]["decoding"]
    rows, muted = [], set()
    entries = {**results["models"], **results["references"]}
    for name, m in entries.items():
        if name in results["references"]:
            muted.add(len(rows))
        latency = (
            "–" if m.get("latency_p50_ms") is None else f"{m['latency_p50_ms']:.1f} / {m['latency_p95_ms']:.1f} ms"
        )
        rows.append(
            [
                name,
                count(m.get("params")),
                size(m.get("disk_bytes")),
                training_time(m),
                _rate(m.get("throughput_per_s")),
                _rate(m.get("beam_throughput_per_s")),
                latency,
            ]
        )
    header = [
        "system",
        "parameters",
        "size on disk",
        "training",
        "sentences/s greedy",
        f"sentences/s {decoding}",
        "one sentence p50 / p95",
    ]
    note = (
        f"Speeds over the whole split in batches of 64; greedy latency over {results['settings']['latency_samples']} "
        "sentences spread over the split, one at a time. bergamot translates one sentence per call: its latency is "
        "over every sentence (the first, which loads the model, left out) and its rate one over its mean."
    )
    return Table("Cost", header, rows, muted, note)


def breakdown_table(results: dict, section: str, title: str, label: str) -> Table | None:
    systems = scored_systems(results)
    first = next(iter(systems.values()))[section]
    if not first:
        return None
    rows = [
        [f"{group} (n={first[group]['n']})"]
        + [f"{s[section][group]['bleu']:.1f} / {s[section][group]['chrf']:.1f}" for s in systems.values()]
        for group in first
    ]
    return Table(title, [label, *systems], rows, note="BLEU / chrF++ of each group's sentences, as a corpus.")


def differences_table(results: dict) -> Table | None:
    rows_in = results["largest_differences"]
    if not rows_in:
        return None
    rows = []
    for r in rows_in:
        outputs = "; ".join(
            f"{n} ({r['chrf'][n]:.0f}): {t}" if n in r["chrf"] else f"{n}: {t}" for n, t in r["translations"].items()
        )
        rows.append([r["source"], r["reference"], r["domain"] or "", outputs])
    note = "The sentences whose sentence chrF++ (in brackets) spreads most across the systems (copy_source aside)."
    return Table("Where the systems differ most", ["text", "reference", "domain", "translations"], rows, note=note)


def tables(results: dict) -> list[Table]:
    found = [
        scores_table(results),
        comparisons_table(results),
        cost_table(results),
        breakdown_table(results, "per_domain", "Per domain", "domain"),
        breakdown_table(results, "per_length", "Per source length (words)", "source words"),
        differences_table(results),
    ]
    return [t for t in found if t is not None]


def _settings(results: dict) -> list[tuple[str, str]]:
    items = [("note", n) for n in results["data"]["notes"]]
    items += [("language pair", results["data"]["language_pair"] or "unknown")]
    items += [(f"signature {k}", v) for k, v in results["signatures"].items()]
    items += list(results["settings"].items())
    items += [(f"run {name}", path) for name, path in results["runs"].items()]
    items += list(results["environment"].items()) + [("created", results["created"])]
    return [(str(k), str(v)) for k, v in items]


def title(results: dict) -> str:
    return f"Translation: {' vs '.join(results['models'])} against the references"


def render_markdown(results: dict, figures: list[str]) -> str:
    head, reason = verdict(results)
    parts = [f"# {title(results)}", "", f"{results['split']} split of {results['data']['source']}", ""]
    parts += [f"**Verdict: {head}.** {reason}", ""]
    found = tables(results)
    parts += [markdown_table(t) for t in found[:3]]
    for name in figures:
        parts += [f"### {TITLES[name]}", "", f"![{TITLES[name]}]({name})", ""]
    parts += [markdown_table(t) for t in found[3:]]
    parts += ["### Settings", ""] + [f"- {k}: {v}" for k, v in _settings(results)] + [""]
    return "\n".join(parts)


def _figure(name: str, png: bytes) -> str:
    data = base64.b64encode(png).decode("ascii")
    caption = html.escape(TITLES[name])
    return (
        f'<div class="card"><figure><img src="data:image/png;base64,{data}" alt="{caption}">'
        f"<figcaption>{caption}</figcaption></figure></div>"
    )


def render_html(results: dict, figures: dict[str, bytes]) -> str:
    head, reason = verdict(results)
    kind = "win" if results["comparison"]["winner"] else "even"
    found = tables(results)
    settings = "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>" for k, v in _settings(results))
    parts = [
        f"<h1>{html.escape(title(results))}</h1>",
        f'<p class="sub">{html.escape(results["split"])} split of {html.escape(results["data"]["source"])}: '
        f"{results['n']:,} sentence pairs · report created {html.escape(results['created'])}</p>",
        f'<div class="verdict {kind}"><div class="head">{html.escape(head)}</div><div>{html.escape(reason)}</div></div>',
        *(html_table(t) for t in found[:3]),
        "<h2>Figures</h2>",
        *(_figure(n, png) for n, png in figures.items()),
        *(html_table(t) for t in found[3:]),
        f'<h2>Settings and environment</h2><div class="card"><dl>{settings}</dl></div>',
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title(results))}</title><style>{STYLE}</style></head>"
        f"<body><main>{''.join(parts)}</main></body></html>\n"
    )
