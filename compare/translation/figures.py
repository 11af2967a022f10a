"""The translation report's figures as PNG bytes: scores with intervals, and scores per domain and per length."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 - the backend must be chosen first
import numpy as np  # noqa: E402

from compare.diagnosis.training_curves_figure import FILENAME as TRAINING_CURVES  # noqa: E402
from compare.diagnosis.training_curves_figure import training_curves_png  # noqa: E402
from compare.render.figures import color, png_bytes  # noqa: E402

SCORES = "scores.png"
PER_DOMAIN = "per_domain.png"
PER_LENGTH = "per_length.png"
TITLES = {
    SCORES: "BLEU and chrF++ with 95% intervals",
    PER_DOMAIN: "chrF++ per domain",
    PER_LENGTH: "BLEU per source length (words)",
    TRAINING_CURVES: "Validation score after each epoch against training time",
}
REFERENCE_COLORS = ("#8a96a3", "#c9d1d9")  # the reference rows in greys, models in the report's colours


def system_colors(results: dict) -> dict[str, str]:
    models = list(results["models"])
    refs = [name for name in scored_systems(results) if name not in results["models"]]
    return {**{n: color(i) for i, n in enumerate(models)}, **{n: REFERENCE_COLORS[i % 2] for i, n in enumerate(refs)}}


def scored_systems(results: dict) -> dict[str, dict]:
    """Models then the references that ran, each with its results entry."""
    refs = {name: r for name, r in results["references"].items() if r["bleu"] is not None}
    return {**results["models"], **refs}


def scores_png(results: dict) -> bytes:
    systems = scored_systems(results)
    names = list(systems)
    fig, axes = plt.subplots(1, 2, figsize=(10, 0.55 * len(names) + 1.6))
    for ax, metric, label in zip(axes, ("bleu", "chrf"), ("BLEU", "chrF++")):
        values = np.array([systems[n][metric] for n in names])
        lo = values - np.array([systems[n][f"{metric}_ci"][0] for n in names])
        hi = np.array([systems[n][f"{metric}_ci"][1] for n in names]) - values
        colors = system_colors(results)
        ax.barh(names, values, xerr=[lo, hi], color=[colors[n] for n in names], capsize=4)
        for y, v in enumerate(values):
            ax.text(v + hi[y] + 0.5, y, f"{v:.1f}", va="center", fontsize=9)
        ax.set_xlabel(label)
        ax.invert_yaxis()
        ax.set_xlim(0, max(100 if metric == "chrf" else 0, float((values + hi).max()) * 1.15 + 1))
    axes[1].set_yticklabels([])
    fig.tight_layout()
    return png_bytes(fig)


def grouped_png(results: dict, section: str, metric: str, label: str) -> bytes:
    systems = scored_systems(results)
    names = list(systems)
    groups = list(next(iter(systems.values()))[section])
    width = 0.8 / len(names)
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(groups) + 2), 3.8))
    x = np.arange(len(groups))
    colors = system_colors(results)
    for i, name in enumerate(names):
        values = [systems[name][section].get(g, {}).get(metric, 0.0) for g in groups]
        ax.bar(x + i * width - 0.4 + width / 2, values, width, label=name, color=colors[name])
    n = next(iter(systems.values()))[section]
    ax.set_xticks(x, [f"{g}\n(n={n[g]['n']})" for g in groups], fontsize=9)
    ax.set_ylabel(label)
    ax.legend(fontsize=8, ncols=min(4, len(names)))
    fig.tight_layout()
    return png_bytes(fig)


def all_figures(results: dict) -> dict[str, bytes]:
    figures = {SCORES: scores_png(results)}
    first = next(iter(results["models"].values()))
    if first["per_domain"]:
        figures[PER_DOMAIN] = grouped_png(results, "per_domain", "chrf", "chrF++")
    if first["per_length"]:
        figures[PER_LENGTH] = grouped_png(results, "per_length", "bleu", "BLEU")
    curves = results.get("training_curves")
    if curves and any(curves["curves"].values()):
        figures[TRAINING_CURVES] = training_curves_png(curves["curves"], curves["metric"])
    return figures
