"""A learning curve's numbers: the mean and spread of each (side, size) point, and where scratch catches up.

Works on `curve.json`'s `points` (one row per side, train size and seed), so the rendering, the app and the
tests read the same summary. A point holds the task's two scores (`Kind.scores`); the curve is drawn
and compared in the first, its headline (`metric`: accuracy unless curve.json names another).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from compare.scoring import wording
from core.sides import FROM_SCRATCH, PRETRAINED

CATCH_UP_TOLERANCE = 0.01  # "within 1 point": scratch's mean headline at most this far below finetune's


@dataclass
class CurvePoint:
    """One side at one train size, over its seeds: its headline score (`values`) and second score per seed."""

    side: str
    size: int
    seeds: list[int] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    seconds_values: list[float] = field(default_factory=list)
    second_values: list[float] = field(default_factory=list)

    @property
    def mean(self) -> float:
        return float(np.mean(self.values))

    @property
    def std(self) -> float:
        """Sample standard deviation over seeds (0 for one seed)."""
        return float(np.std(self.values, ddof=1)) if len(self.values) > 1 else 0.0

    @property
    def low(self) -> float:
        return float(min(self.values))

    @property
    def high(self) -> float:
        return float(max(self.values))

    @property
    def second(self) -> float:
        return float(np.mean(self.second_values))

    @property
    def seconds(self) -> float:
        return float(np.mean(self.seconds_values))


def metrics(curve: dict) -> tuple[str, str]:
    """The curve's two scores, its headline first (`accuracy`, `macro_f1` for a curve.json without `problem_type`)."""
    return wording.of_results(curve).scores


def summarise(points: list[dict], scores: tuple[str, str] = ("accuracy", "macro_f1")) -> dict[str, list[CurvePoint]]:
    """Groups `curve.json` points by side (in order of first appearance), each side's points by ascending size."""
    first, second = scores
    grouped: dict[str, dict[int, CurvePoint]] = {}
    for row in sorted(points, key=lambda r: (r["size"], r["seed"])):
        point = grouped.setdefault(row["side"], {}).setdefault(row["size"], CurvePoint(row["side"], row["size"]))
        point.seeds.append(row["seed"])
        point.values.append(row[first])
        point.second_values.append(row[second])
        point.seconds_values.append(row["train_seconds"])
    order = list(dict.fromkeys(row["side"] for row in points))
    return {side: [grouped[side][size] for size in sorted(grouped[side])] for side in order}


def catch_up_size(
    points: list[dict], tolerance: float = CATCH_UP_TOLERANCE, scores: tuple[str, str] = ("accuracy", "macro_f1")
) -> int | None:
    """The smallest train size at which scratch's mean headline score (`scores[0]`) is within `tolerance` of
    finetune's, or None.

    Only sizes where both sides have points count. Means are over seeds.

        >>> rows = [{"side": s, "size": n, "seed": 0, "accuracy": a, "macro_f1": a, "train_seconds": 1}
        ...         for s, n, a in [("finetune", 100, 0.80), ("scratch", 100, 0.60),
        ...                         ("finetune", 1000, 0.85), ("scratch", 1000, 0.845)]]
        >>> catch_up_size(rows)
        1000
    """
    sides = summarise(points, scores)
    finetune = {p.size: p.mean for p in sides.get(PRETRAINED, [])}
    scratch = {p.size: p.mean for p in sides.get(FROM_SCRATCH, [])}
    for size in sorted(set(finetune) & set(scratch)):
        # A hair of slack so that a gap of exactly one point, computed in floating point, counts as within.
        if scratch[size] >= finetune[size] - tolerance - 1e-12:
            return size
    return None


def gaps(points: list[dict], scores: tuple[str, str] = ("accuracy", "macro_f1")) -> dict[int, float]:
    """Finetune's mean headline score minus scratch's, per train size both sides have."""
    sides = summarise(points, scores)
    finetune = {p.size: p.mean for p in sides.get(PRETRAINED, [])}
    scratch = {p.size: p.mean for p in sides.get(FROM_SCRATCH, [])}
    return {size: finetune[size] - scratch[size] for size in sorted(set(finetune) & set(scratch))}


def catch_up_sentence(
    size: int | None, sizes: list[int], tolerance: float = CATCH_UP_TOLERANCE, metric: str = "accuracy"
) -> str:
    """The curve's answer in words."""
    if wording.is_fraction(metric):
        within = f"within {tolerance * 100:g} point{'' if tolerance == 0.01 else 's'} of the fine-tuned one"
    else:
        within = f"within {tolerance:g} of the fine-tuned one"
    if size is None:
        return (
            f"The from-scratch model never came {within} in the range tried "
            f"({min(sizes):,} to {max(sizes):,} training examples)."
        )
    first = " (the smallest size tried)" if size == min(sizes) else ""
    return (
        f"The from-scratch model first comes {within} (mean test {wording.name(metric)} over seeds) at {size:,} "
        f"training examples{first}."
    )
