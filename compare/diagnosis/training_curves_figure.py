"""`training_curves.png`: validation accuracy (or a translation run's chrF++ or loss) after each epoch against
cumulative training seconds.

Both models share one axis, so a reader sees at a glance whether one was stopped while still climbing
and which was ahead at equal training time. The time axis turns logarithmic when one run trained more
than `LOG_SCALE_RATIO` times longer than the other, so the shorter one does not shrink to a dot.
"""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 - the backend must be chosen first

from compare.scoring import wording  # noqa: E402

FILENAME = "training_curves.png"
LOG_SCALE_RATIO = 10
COLORS = ["#3b6fb6", "#e07b39", "#4a9d5b", "#c44e52", "#8172b3", "#937860"]


METRIC_LABELS = {"val_chrf": "validation chrF++", "val_loss": "validation loss"}


def metric_label(metric: str) -> str:
    """The axis label of a curve's `val_<score>`: "validation macro-F1", "validation Spearman".

    >>> metric_label("val_spearman"), metric_label("val_accuracy"), metric_label("val_chrf")
    ('validation Spearman', 'validation accuracy', 'validation chrF++')
    """
    return METRIC_LABELS.get(metric) or f"validation {wording.name(metric.removeprefix('val_'))}"


def training_curves_figure(curves: dict[str, list[dict]], metric: str = "val_accuracy") -> plt.Figure:
    """The figure of `training_time.training_curves(runs, metric)`: one line per model, a marker per epoch."""
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for i, (name, curve) in enumerate(curves.items()):
        seconds = [point["seconds"] for point in curve]
        values = [point[metric] for point in curve]
        ax.plot(
            seconds,
            values,
            marker="o",
            color=COLORS[i % len(COLORS)],
            label=f"{name} ({len(curve)} epoch{'' if len(curve) == 1 else 's'})",
        )
    ends = [curve[-1]["seconds"] for curve in curves.values() if curve]
    if ends and min(ends) > 0 and max(ends) / min(ends) > LOG_SCALE_RATIO:
        ax.set_xscale("log")
        ax.set_xlabel("cumulative training time (s, log scale)")
    else:
        ax.set_xlabel("cumulative training time (s)")
    label = metric_label(metric)
    ax.set_ylabel(label)
    ax.set_title(f"{label[0].upper()}{label[1:]} against training time")
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(alpha=0.25, linewidth=0.6)
    ax.legend(frameon=False)
    fig.tight_layout()
    return fig


def training_curves_png(curves: dict[str, list[dict]], metric: str = "val_accuracy") -> bytes:
    """The figure as PNG bytes (for the report directory and, base64-encoded, the HTML report)."""
    fig = training_curves_figure(curves, metric)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=130, bbox_inches="tight", facecolor="white")
    plt.close(fig)
    return buffer.getvalue()


def write_training_curves(curves: dict[str, list[dict]], output_dir: str | Path) -> Path:
    """Writes `output_dir/training_curves.png` and returns its path."""
    path = Path(output_dir) / FILENAME
    path.write_bytes(training_curves_png(curves))
    return path
