"""A learning curve for people: `curve.png` (the headline score against train size), the table, `curve.md`,
`curve.html`."""

from __future__ import annotations

import base64
import html

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 - the backend must be chosen first
from matplotlib.ticker import FuncFormatter, NullFormatter  # noqa: E402

from compare.curve.points import catch_up_sentence, gaps, metrics, summarise  # noqa: E402
from compare.render.figures import color, png_bytes, style_axes  # noqa: E402
from compare.render.format import score, seconds  # noqa: E402
from compare.render.html import STYLE, html_table  # noqa: E402
from compare.render.markdown import markdown_table  # noqa: E402
from compare.render.tables import Table  # noqa: E402
from compare.scoring import wording  # noqa: E402

FIGURE = "curve.png"


def curve_figure(curve: dict) -> bytes:
    """The mean test headline score against train size (log x), one line per side, a band of one standard
    deviation over seeds (when there are several), each seed's run as a faint dot, and the catch-up size marked."""
    fig, ax = plt.subplots(figsize=(7.2, 4.4))
    scores = metrics(curve)
    for i, (side, points) in enumerate(summarise(curve["points"], scores).items()):
        sizes = [p.size for p in points]
        means = [p.mean for p in points]
        ax.plot(sizes, means, marker="o", color=color(i), label=side, linewidth=2)
        if any(len(p.values) > 1 for p in points):
            ax.fill_between(
                sizes, [p.mean - p.std for p in points], [p.mean + p.std for p in points], color=color(i), alpha=0.18
            )
        for p in points:
            ax.scatter([p.size] * len(p.values), p.values, color=color(i), s=12, alpha=0.45, linewidths=0)
    if curve["catch_up_size"] is not None:
        ax.axvline(curve["catch_up_size"], color="0.4", linestyle=":", linewidth=1.2)
        ax.annotate(
            "scratch within 1 point" if wording.is_fraction(scores[0]) else "scratch within 0.01",
            (curve["catch_up_size"], 0.02),
            xycoords=("data", "axes fraction"),
            xytext=(-4, 0),
            textcoords="offset points",
            ha="right",
            fontsize=8,
            color="0.35",
        )
    ax.set_xscale("log")
    ax.set_xticks(curve["sizes"])
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("training examples (log scale)")
    seeds = len(curve["seeds"])
    band = f", band: ±1 sd over {seeds} seeds" if seeds > 1 else ""
    ax.set_ylabel(f"{curve['split']} {wording.name(scores[0])} (mean{band})")
    ax.set_title("Learning curve")
    ax.legend(frameon=False)
    style_axes(ax)
    fig.tight_layout()
    return png_bytes(fig)


def curve_table(curve: dict) -> Table:
    """One row per train size: each side's mean ± sd (and range) of the headline score, its second score, training
    time; the gap."""
    first, second = scores = metrics(curve)
    sides = summarise(curve["points"], scores)
    by_size = {name: {p.size: p for p in points} for name, points in sides.items()}
    gap = gaps(curve["points"], scores)
    header = ["train size"]
    for name in sides:
        header += [f"{name} {wording.name(first)}", f"{name} {wording.name(second)}", f"{name} train time"]
    fraction = wording.is_fraction(first)
    header.append("gap (points)" if fraction else "gap")
    rows = []
    for size in curve["sizes"]:
        row = [f"{size:,}"]
        for name in sides:
            p = by_size[name].get(size)
            if p is None:
                row += ["–", "–", "–"]
                continue
            sd = f"{p.std * 100:.1f}" if fraction else f"{p.std:.3f}"
            spread = f" ± {sd} ({score(first, p.low)}–{score(first, p.high)})" if len(p.values) > 1 else ""
            row += [f"{score(first, p.mean)}{spread}", score(second, p.second), seconds(p.seconds)]
        row.append(wording.signed_number(first, gap[size]) if size in gap else "–")
        rows.append(row)
    seeds = len(curve["seeds"])
    unit = "in percent " if fraction else ""
    note = (
        f"{wording.name(first)[:1].upper()}{wording.name(first)[1:]} {unit}on the full {curve['split']} split: mean over "
        f"{seeds} seed(s)"
        + (", ± the sample standard deviation, (lowest–highest)" if seeds > 1 else "")
        + "; each seed draws its own train subset and initialisation. Gap: fine-tuned minus from-scratch."
    )
    return Table(
        f"{wording.name(first)[:1].upper()}{wording.name(first)[1:]} by training-set size", header, rows, note=note
    )


def curve_summary(curve: dict) -> str:
    """The curve's answer in bold, then its table, in Markdown (the app's report tab; curve.md puts the figure between)."""
    return f"**{sentence(curve)}**\n\n" + markdown_table(curve_table(curve))


def sentence(curve: dict) -> str:
    return catch_up_sentence(curve["catch_up_size"], curve["sizes"], metric=metrics(curve)[0])


def render_markdown(curve: dict) -> str:
    return (
        f"# Learning curve: {curve['source']}\n\n**{sentence(curve)}**\n\n![Learning curve]({FIGURE})\n\n"
        + markdown_table(curve_table(curve))
        + f"\nModel flags: the `{curve['profile']}` profile. Runs: `runs/<side>-n<size>-seed<seed>`.\n"
    )


def render_html(curve: dict, png: bytes) -> str:
    answer = html.escape(sentence(curve))
    data = base64.b64encode(png).decode("ascii")
    title = f"Learning curve: {html.escape(curve['source'])}"
    parts = [
        f"<h1>{title}</h1>",
        f'<p class="sub">{len(curve["points"])} runs · sizes {", ".join(f"{s:,}" for s in curve["sizes"])} · '
        f"seeds {', '.join(map(str, curve['seeds']))} · {html.escape(curve['profile'])} profile</p>",
        f'<div class="verdict"><div class="head">{answer}</div></div>',
        f'<div class="card"><figure><img src="data:image/png;base64,{data}" alt="Learning curve">'
        f"<figcaption>Test {wording.name(metrics(curve)[0])} against training-set size</figcaption></figure></div>",
        html_table(curve_table(curve)),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{title}</title><style>{STYLE}</style></head><body><main>{''.join(parts)}</main></body></html>\n"
    )
