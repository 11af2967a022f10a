"""Validation score against training compute: which model is ahead at equal training time?

A model's curve is its validation score after each epoch (`val_accuracy`, or the task's headline: `val_macro_f1`,
`val_spearman`; a translation run's `val_chrf`) against the cumulative training seconds
(run.json `training.history[].train_seconds`, each epoch's training wall time; a history without them
spreads `training.seconds` evenly over its epochs). Between epochs a model is worth the best validation
score it has reached so far (a step function: the run keeps its best epoch's weights), and before its
first epoch it has no score at all. Two curves are compared only over the time both cover, from the
later first epoch to the earlier last epoch; at each epoch time in that interval, the model with the
higher best-so-far score is ahead.

Examples:
    >>> curves = {"a": [{"epoch": 1, "seconds": 10.0, "val_accuracy": 0.6},
    ...                 {"epoch": 2, "seconds": 20.0, "val_accuracy": 0.8}],
    ...           "b": [{"epoch": 1, "seconds": 15.0, "val_accuracy": 0.7},
    ...                 {"epoch": 2, "seconds": 40.0, "val_accuracy": 0.9}]}
    >>> result = ahead_at_equal_time(curves)
    >>> result["seconds"], result["ahead"], result["scores"]
    (20.0, 'a', {'a': 0.8, 'b': 0.7})
"""

from __future__ import annotations

from typing import Any

from compare.scoring import wording
from core.record import RunRecord


def training_curve(record: Any, metric: str = "val_accuracy") -> list[dict]:
    """`[{"epoch", "seconds", metric}]` of one run: cumulative training seconds after each epoch, and the history's
    `metric` then (`val_accuracy`, `val_macro_f1`, `val_spearman`; a translation run's `val_chrf` or `val_loss`);
    empty when the history does not record `metric`."""
    history = record.training.history
    if any(metric not in row for row in history):
        return []
    if all("train_seconds" in row for row in history):
        durations = [row["train_seconds"] for row in history]
    else:
        durations = [record.training.seconds / len(history)] * len(history) if history else []
    curve, elapsed = [], 0.0
    for row, duration in zip(history, durations):
        elapsed += duration
        curve.append({"epoch": row["epoch"], "seconds": elapsed, metric: row[metric]})
    return curve


def training_curves(runs: dict[str, RunRecord], metric: str = "val_accuracy") -> dict[str, list[dict]]:
    """Model name -> its `training_curve`, for every run (the table the report prints and plots)."""
    return {name: training_curve(run, metric) for name, run in runs.items()}


def best_so_far(curve: list[dict], seconds: float, metric: str = "val_accuracy") -> float | None:
    """The best validation score `curve` has reached by `seconds`, or None before its first epoch."""
    reached = [point[metric] for point in curve if point["seconds"] <= seconds]
    return max(reached) if reached else None


def ahead_at_equal_time(curves: dict[str, list[dict]], metric: str = "val_accuracy") -> dict | None:
    """Which of two models is ahead at equal training time in `metric`, or None when their curves do not overlap.

    Returns:
        `{"seconds": the end of the shorter curve, "ahead": the model ahead there (None on a tie),
        "scores": {model: best-so-far score there}, "points": [{"seconds", "scores", "ahead"}]}`,
        `points` at every epoch time of either model inside the interval both curves cover.
    """
    if len(curves) != 2:
        raise ValueError(f"ahead_at_equal_time compares two models; got {len(curves)}: {sorted(curves)}")
    if any(not curve for curve in curves.values()):
        return None
    start = max(curve[0]["seconds"] for curve in curves.values())
    end = min(curve[-1]["seconds"] for curve in curves.values())
    if start > end:
        return None
    times = sorted({p["seconds"] for curve in curves.values() for p in curve if start <= p["seconds"] <= end})
    points = [_standing(curves, t, metric) for t in times]
    return {**points[-1], "points": points}


def equal_time_sentence(curves: dict[str, list[dict]], metric: str = "val_accuracy") -> str:
    """One sentence for the report answering "at equal training time, which is ahead?"."""
    result = ahead_at_equal_time(curves, metric)
    if result is None:
        (first, a), (second, b) = curves.items()
        if not a or not b:
            return "A model has no training history, so the models cannot be compared at equal training time."
        short, long = (first, second) if a[-1]["seconds"] < b[-1]["seconds"] else (second, first)
        return (
            f"The training curves do not overlap: {short} finished training ({curves[short][-1]['seconds']:.0f} s) "
            f"before {long}'s first epoch ended ({curves[long][0]['seconds']:.0f} s), so they cannot be compared "
            "at equal training time."
        )
    at, scores, ahead = result["seconds"], result["scores"], result["ahead"]
    if ahead is None:
        return f"At equal training time ({at:.0f} s) the models are level at {next(iter(scores.values())):.3f}."
    behind = next(name for name in scores if name != ahead)
    score = wording.name(metric.removeprefix("val_"))
    return (
        f"At equal training time ({at:.0f} s, the end of the shorter run) {ahead} is ahead: "
        f"{scores[ahead]:.3f} against {behind}'s {scores[behind]:.3f} validation {score}."
    )


def _standing(curves: dict[str, list[dict]], seconds: float, metric: str) -> dict:
    scores = {name: best_so_far(curve, seconds, metric) for name, curve in curves.items()}
    (first, a), (second, b) = scores.items()
    ahead = None if a == b else first if a > b else second
    return {"seconds": seconds, "ahead": ahead, "scores": scores}
