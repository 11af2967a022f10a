"""Numbers as the reports print them: percentages, intervals, counts, sizes and durations ("–" for none)."""

from __future__ import annotations

from compare.scoring import wording


def pct(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value * 100:.{digits}f}"


def ci(bounds: list[float] | None) -> str:
    return "–" if not bounds else f"[{bounds[0] * 100:.1f}, {bounds[1] * 100:.1f}]"


def signed_ci(bounds: list[float]) -> str:
    return f"[{bounds[0] * 100:+.1f}, {bounds[1] * 100:+.1f}]"


def score(metric: str, value: float | None) -> str:
    """A score as the tables print it: a fraction in percent (`84.2`), a correlation or error as is (`0.842`)."""
    if value is None:
        return "–"
    return pct(value) if wording.is_fraction(metric) else f"{value:.3f}"


def score_ci(metric: str, bounds: list[float] | None) -> str:
    if not bounds or wording.is_fraction(metric):
        return ci(bounds)
    return f"[{bounds[0]:.3f}, {bounds[1]:.3f}]"


def signed_score(metric: str, value: float) -> str:
    """A difference in `metric`: points to two decimals (`+4.21`), or a correlation's (`+0.042`)."""
    return f"{value * 100:+.2f}" if wording.is_fraction(metric) else f"{value:+.3f}"


def signed_score_ci(metric: str, bounds: list[float]) -> str:
    return signed_ci(bounds) if wording.is_fraction(metric) else f"[{bounds[0]:+.3f}, {bounds[1]:+.3f}]"


def short_count(value: float) -> str:
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= size:
            return f"{value / size:.1f}{unit}"
    return f"{value:.0f}"


def count(value: float | None) -> str:
    return "–" if value is None else short_count(value)


def size(value: float | None) -> str:
    if value is None:
        return "–"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if value >= scale:
            return f"{value / scale:.1f} {unit}"
    return f"{value:.0f} B"


def training_time(model: dict) -> str:
    """A model's training time, and its teacher's beside it when it learnt from one: "4.6 min + 5.2 min teacher";
    a self-pretrained model's pretraining first: "3.1 min pretraining + 2.5 min"."""
    teacher, pretraining = model.get("teacher_seconds"), model.get("pretrain_seconds")
    shown = seconds(model.get("train_seconds")) + (f" + {seconds(teacher)} teacher" if teacher is not None else "")
    return f"{seconds(pretraining)} pretraining + {shown}" if pretraining is not None else shown


def seconds(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.0f} s" if value < 120 else f"{value / 60:.1f} min"
