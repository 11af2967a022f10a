"""The report's figures as PNG bytes, for each kind of task (`all_figures`; the kind names its figures, `ComparedKind.figures`,
drawn by `FIGURES`).

Single label: the headline score (accuracy) against cost, confusion matrices, reliability diagrams and F1 per
class. Multi-label: macro-F1 against cost, the reliability of every label's probability, F1 per label.
Regression: Spearman against cost and each model's predicted values against the gold ones (no calibration).
Each function takes the `models` section of results.json (plus what else it needs) and returns PNG bytes,
so the same image goes into the report directory and, base64-encoded, into the self-contained HTML.
"""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 - the backend must be chosen first
import numpy as np  # noqa: E402
from matplotlib.ticker import FuncFormatter, NullFormatter  # noqa: E402

from compare.kinds import reported
from compare.render.format import short_count  # noqa: E402
from compare.scoring import wording  # noqa: E402

FIGURE_TITLES = {
    "accuracy_vs_cost.png": "Accuracy against cost",
    "macro_f1_vs_cost.png": "Macro-F1 against cost",
    "spearman_vs_cost.png": "Spearman against cost",
    "confusion_matrices.png": "Confusion matrices",
    "per_class_f1.png": "F1 per class",
    "per_label_f1.png": "F1 per label",
    "predicted_vs_gold.png": "Predicted against gold values",
    "reliability.png": "Reliability diagrams",
    "curve.png": "Learning curve",
    "training_curves.png": "Validation score against training time",
    "pretraining.png": "Self-pretraining: masked-LM loss and accuracy against steps",
    "tuning.png": "Tuning: each trial's validation score and the parameters' importances",
}
COLORS = ["#3b6fb6", "#e07b39", "#4a9d5b", "#c44e52", "#8172b3", "#937860"]
BASELINE_STYLE = {"majority": ":", "no_labels": ":", "train_mean": ":", "tfidf_cosine": "-."}  # TF-IDF models: --


def figure_title(name: str) -> str:
    """A figure's caption from its file name: the report's own titles, else the name in words."""
    stem = name.rsplit("/", 1)[-1].removesuffix(".png")
    return FIGURE_TITLES.get(f"{stem}.png") or stem.replace("_", " ").replace("-", " ").capitalize()


def color(i: int) -> str:
    return COLORS[i % len(COLORS)]


def png_bytes(fig: plt.Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=130, bbox_inches="tight", facecolor="white")
    plt.close(fig)
    return buffer.getvalue()


def style_axes(ax: plt.Axes) -> None:
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(alpha=0.25, linewidth=0.6)
    ax.set_axisbelow(True)


def confusion_matrices(models: dict, labels: list[str]) -> bytes:
    """One matrix per model; cells coloured by the share of the gold row, annotated with counts."""
    k = len(labels)
    size = max(3.2, 0.55 * k + 1.8)
    fig, axes = plt.subplots(1, len(models), figsize=(size * len(models), size), squeeze=False)
    for ax, (name, entry) in zip(axes[0], models.items()):
        counts = np.asarray(entry["confusion"], dtype=float)
        shares = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
        ax.imshow(shares, cmap="Blues", vmin=0, vmax=1)
        for (i, j), value in np.ndenumerate(counts):
            ax.text(j, i, f"{int(value)}", ha="center", va="center", color="white" if shares[i, j] > 0.55 else "black")
        ax.set_xticks(range(k), labels, rotation=45 if k > 3 else 0, ha="right" if k > 3 else "center")
        ax.set_yticks(range(k), labels)
        ax.set_xlabel("predicted")
        ax.set_ylabel("gold")
        ax.set_title(f"{name}  (accuracy {entry['accuracy']:.3f})")
    fig.tight_layout()
    return png_bytes(fig)


def reliability_diagrams(models: dict, confidence: str = "probability of the predicted class") -> bytes:
    """Accuracy against confidence per bin (the diagonal is perfect calibration), above how many fall per bin;
    `confidence` says what the confidence is."""
    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(6.2, 6.2), sharex=True, gridspec_kw={"height_ratios": [3, 1], "hspace": 0.08}
    )
    top.plot([0, 1], [0, 1], color="0.6", linestyle="--", linewidth=1, label="perfect calibration")
    bins = next(iter(models.values()))["reliability"]
    width = (bins[0]["hi"] - bins[0]["lo"]) / (len(models) + 0.5)
    for i, (name, entry) in enumerate(models.items()):
        rows = [b for b in entry["reliability"] if b["count"]]
        top.plot(
            [b["confidence"] for b in rows],
            [b["accuracy"] for b in rows],
            marker="o",
            color=color(i),
            label=f"{name} (ECE {entry['ece']:.3f})",
        )
        total = sum(b["count"] for b in entry["reliability"])
        bottom.bar(
            [b["lo"] + width * (i + 0.75) for b in entry["reliability"]],
            [b["count"] / total for b in entry["reliability"]],
            width=width,
            color=color(i),
        )
    used = [b for e in models.values() for b in e["reliability"] if b["count"]]
    lowest = max(0.0, min(b["lo"] for b in used) - 0.05)
    for ax in (top, bottom):
        style_axes(ax)
        ax.set_xlim(lowest, 1.0)
    top.set_ylim(min(lowest, min(b["accuracy"] for b in used) - 0.05), 1.02)
    top.set_ylabel("accuracy in bin")
    top.set_title("Reliability: does confidence match accuracy?")
    top.legend(loc="upper left", frameon=False)
    bottom.set_ylabel("share")
    bottom.set_xlabel(f"confidence ({confidence})")
    return png_bytes(fig)


def per_class_f1(models: dict, labels: list[str], unit: str = "class") -> bytes:
    """F1 of each class (or label, `unit`), one bar per model."""
    k = len(labels)
    fig, ax = plt.subplots(figsize=(max(5.5, 1.1 * k * len(models) / 2 + 2.5), 3.6))
    width = 0.8 / len(models)
    x = np.arange(k)
    for i, (name, entry) in enumerate(models.items()):
        values = [entry["per_class"][label]["f1"] for label in labels]
        bars = ax.bar(x + (i - (len(models) - 1) / 2) * width, values, width, color=color(i), label=name)
        ax.bar_label(bars, fmt="%.2f", fontsize=8, padding=2)
    style_axes(ax)
    ax.set_xticks(x, labels, rotation=30 if k > 4 else 0)
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("F1")
    ax.set_title(f"F1 per {unit}")
    ax.legend(frameon=False, ncols=len(models), loc="upper center", bbox_to_anchor=(0.5, -0.12 if k <= 4 else -0.25))
    return png_bytes(fig)


def score_against_cost(models: dict, baselines: dict, metric: str = "accuracy") -> bytes:
    """The headline score (with its 95% interval) against training time and against single-text latency, log
    scales; the reference rows as horizontal lines."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    panels = [
        ("train_seconds", "training time (s, log scale)"),
        ("latency_p50_ms", "single-text latency p50 (ms, log)"),
    ]
    for ax, (key, xlabel) in zip(axes, panels):
        for i, (name, entry) in enumerate(models.items()):
            x = max(entry[key], 1e-3)
            lo, hi = entry[f"{metric}_ci"]
            # the interval drawn about its own middle: a rank score's percentile interval need not hold the point
            middle = (lo + hi) / 2
            ax.errorbar([x], [middle], yerr=[[middle - lo], [hi - middle]], fmt="none", capsize=4, color=color(i))
            ax.plot([x], [entry[metric]], "o", markersize=9, color=color(i), label=name)
            params = f"{short_count(entry['params'])} params" if entry.get("params") else ""
            ax.annotate(f"{name}\n{params}", (x, entry[metric]), textcoords="offset points", xytext=(10, -4))
        for key_b, entry in baselines.items():
            if entry:
                ax.axhline(entry[metric], color="0.45", linestyle=BASELINE_STYLE.get(key_b, "--"), linewidth=1)
        ax.set_xscale("log")
        xs = [max(e[key], 1e-3) for e in models.values()]
        ax.set_xlim(min(xs) / 3, max(xs) * 6)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(xlabel)
        style_axes(ax)
    for key_b, entry in baselines.items():
        if entry:
            axes[1].annotate(
                f"{wording.REFERENCE_NAMES.get(key_b, key_b)} {entry[metric]:.3f}",
                (1.0, entry[metric]),
                xycoords=("axes fraction", "data"),
                xytext=(-4, 3),
                textcoords="offset points",
                ha="right",
                fontsize=8,
                color="0.35",
            )
    axes[0].set_ylabel(f"test {wording.name(metric)} (95% interval)")
    fig.suptitle(f"{wording.name(metric)[:1].upper()}{wording.name(metric)[1:]} against cost")
    fig.tight_layout()
    return png_bytes(fig)


def predicted_against_gold(models: dict, outputs: dict[str, np.ndarray], gold: np.ndarray) -> bytes:
    """Each regression model's predicted value against the gold value of every example (the diagonal is a perfect
    prediction), with its correlations and mean absolute error."""
    fig, axes = plt.subplots(1, len(outputs), figsize=(4.2 * len(outputs), 4.2), squeeze=False)
    low = min(float(gold.min()), *(float(v.min()) for v in outputs.values()))
    high = max(float(gold.max()), *(float(v.max()) for v in outputs.values()))
    for i, (ax, (name, values)) in enumerate(zip(axes[0], outputs.items())):
        ax.plot([low, high], [low, high], color="0.6", linestyle="--", linewidth=1)
        ax.scatter(gold, values, s=8, alpha=0.35, color=color(i), linewidths=0)
        entry = models[name]
        ax.set_title(
            f"{name}\nSpearman {entry['spearman']:.3f}, Pearson {entry['pearson']:.3f}, MAE {entry['mae']:.3f}",
            fontsize=9,
        )
        ax.set_xlim(low, high)
        ax.set_ylim(low, high)
        ax.set_aspect("equal")
        ax.set_xlabel("gold value")
        ax.set_ylabel("predicted value")
        style_axes(ax)
    fig.tight_layout()
    return png_bytes(fig)


# How each figure a kind names (`ComparedKind.figures`) is drawn: its file name, and the figure from results.json's `models`,
# its labels, the models' outputs and the gold answers.
FIGURES = {
    "confusion_matrices": (
        "confusion_matrices.png",
        lambda models, labels, outputs, gold: confusion_matrices(models, labels),
    ),
    "reliability": ("reliability.png", lambda models, labels, outputs, gold: reliability_diagrams(models)),
    "label_reliability": (
        "reliability.png",
        lambda models, labels, outputs, gold: reliability_diagrams(
            models, "each label's probability of its more likely answer"
        ),
    ),
    "per_class_f1": ("per_class_f1.png", lambda models, labels, outputs, gold: per_class_f1(models, labels)),
    "per_label_f1": ("per_label_f1.png", lambda models, labels, outputs, gold: per_class_f1(models, labels, "label")),
    "predicted_vs_gold": (
        "predicted_vs_gold.png",
        lambda models, labels, outputs, gold: predicted_against_gold(models, outputs, gold),
    ),
}


def pretraining_curves(section: dict[str, dict]) -> bytes:
    """`pretraining.png` of results.json `pretraining` (`compare.diagnosis.pretraining`), two panels sharing the step
    axis: the masked-LM loss (training dashed, validation with markers) and the validation masked accuracy, one
    colour per self-pretrained model."""
    fig, (loss_ax, accuracy_ax) = plt.subplots(1, 2, figsize=(9.6, 3.8))
    for i, (name, model) in enumerate(section.items()):
        curve = model["curve"]
        validated = [point for point in curve if "val_loss" in point]
        steps = [point["steps"] for point in validated]
        loss_ax.plot([p["steps"] for p in curve], [p["loss"] for p in curve], "--", color=color(i), alpha=0.6,
                     label=f"{name}, training")  # fmt: skip
        loss_ax.plot(steps, [p["val_loss"] for p in validated], "o-", ms=3, color=color(i), label=f"{name}, validation")
        accuracy_ax.plot(steps, [p["val_masked_accuracy"] for p in validated], "o-", ms=3, color=color(i), label=name)
    loss_ax.set(xlabel="pretraining optimizer steps", ylabel="masked-LM loss (cross-entropy)", title="Masked-LM loss")
    accuracy_ax.set(xlabel="pretraining optimizer steps", ylabel="validation masked accuracy", title="Masked accuracy")
    for ax in (loss_ax, accuracy_ax):
        style_axes(ax)
        ax.legend(frameon=False, fontsize=8)
    fig.tight_layout()
    return png_bytes(fig)


def all_figures(results: dict, outputs: dict[str, np.ndarray], gold: np.ndarray) -> dict[str, bytes]:
    """Every figure of the report for its kind of task, by file name: the headline against cost, then the kind's."""
    models, baselines, labels = results["models"], results["baselines"], results["labels"]
    metric, kind = results["headline_metric"], wording.of_results(results)
    figures = {f"{metric}_vs_cost.png": score_against_cost(models, baselines, metric)}
    for name in reported(kind).figures:
        filename, draw = FIGURES[name]
        figures[filename] = draw(models, labels, outputs, gold)
    return figures
