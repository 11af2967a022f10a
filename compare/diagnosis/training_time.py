"""Validation accuracy against training compute: which model is ahead at equal training time?

A model's curve is its validation accuracy after each epoch against the cumulative training seconds
(run.json `training.history[].train_seconds`, each epoch's training wall time; a history without them
spreads `training.seconds` evenly over its epochs). Between epochs a model is worth the best validation
accuracy it has reached so far (a step function: the run keeps its best epoch's weights), and before its
first epoch it has no score at all. Two curves are compared only over the time both cover, from the
later first epoch to the earlier last epoch; at each epoch time in that interval, the model with the
higher best-so-far accuracy is ahead.

Examples:
    >>> curves = {"a": [{"epoch": 1, "seconds": 10.0, "val_accuracy": 0.6},
    ...                 {"epoch": 2, "seconds": 20.0, "val_accuracy": 0.8}],
    ...           "b": [{"epoch": 1, "seconds": 15.0, "val_accuracy": 0.7},
    ...                 {"epoch": 2, "seconds": 40.0, "val_accuracy": 0.9}]}
    >>> result = ahead_at_equal_time(curves)
    >>> result["seconds"], result["ahead"], result["accuracy"]
    (20.0, 'a', {'a': 0.8, 'b': 0.7})
"""

from __future__ import annotations


def training_curve(run: dict, metric: str = "val_accuracy") -> list[dict]:
    """`[{"epoch", "seconds", metric}]` of one run: cumulative training seconds after each epoch, and the history's
    `metric` then (`val_accuracy`; a translation run's `val_chrf` or `val_loss`)."""
    history = run["training"]["history"]
    if all("train_seconds" in row for row in history):
        durations = [row["train_seconds"] for row in history]
    else:
        durations = [run["training"]["seconds"] / len(history)] * len(history) if history else []
    curve, elapsed = [], 0.0
    for row, duration in zip(history, durations):
        elapsed += duration
        curve.append({"epoch": row["epoch"], "seconds": elapsed, metric: row[metric]})
    return curve


def training_curves(runs: dict[str, dict], metric: str = "val_accuracy") -> dict[str, list[dict]]:
    """Model name -> its `training_curve`, for every run (the table the report prints and plots)."""
    return {name: training_curve(run, metric) for name, run in runs.items()}


def best_so_far(curve: list[dict], seconds: float) -> float | None:
    """The best validation accuracy `curve` has reached by `seconds`, or None before its first epoch."""
    reached = [point["val_accuracy"] for point in curve if point["seconds"] <= seconds]
    return max(reached) if reached else None


def ahead_at_equal_time(curves: dict[str, list[dict]]) -> dict | None:
    """Which of two models is ahead at equal training time, or None when their curves do not overlap.

    Returns:
        `{"seconds": the end of the shorter curve, "ahead": the model ahead there (None on a tie),
        "accuracy": {model: best-so-far accuracy there}, "points": [{"seconds", "accuracy", "ahead"}]}`,
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
    points = [_standing(curves, t) for t in times]
    return {**points[-1], "points": points}


def equal_time_sentence(curves: dict[str, list[dict]]) -> str:
    """One sentence for the report answering "at equal training time, which is ahead?"."""
    result = ahead_at_equal_time(curves)
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
    at, accuracy, ahead = result["seconds"], result["accuracy"], result["ahead"]
    if ahead is None:
        return f"At equal training time ({at:.0f} s) the models are level at {next(iter(accuracy.values())):.3f}."
    behind = next(name for name in accuracy if name != ahead)
    return (
        f"At equal training time ({at:.0f} s, the end of the shorter run) {ahead} is ahead: "
        f"{accuracy[ahead]:.3f} against {behind}'s {accuracy[behind]:.3f} validation accuracy."
    )


def _standing(curves: dict[str, list[dict]], seconds: float) -> dict:
    accuracy = {name: best_so_far(curve, seconds) for name, curve in curves.items()}
    (first, a), (second, b) = accuracy.items()
    ahead = None if a == b else first if a > b else second
    return {"seconds": seconds, "ahead": ahead, "accuracy": accuracy}
