"""A learning curve's numbers: the mean and spread of each (side, size) point, and where scratch catches up.

Works on `curve.json`'s `points` (one row per side, train size and seed), so the rendering, the app and the
tests read the same summary.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.sides import FROM_SCRATCH, PRETRAINED

CATCH_UP_TOLERANCE = 0.01  # "within 1 point": scratch's mean accuracy at most this far below finetune's


@dataclass
class CurvePoint:
    """One side at one train size, over its seeds."""

    side: str
    size: int
    seeds: list[int]
    accuracies: list[float]
    macro_f1s: list[float]
    train_seconds: list[float]

    @property
    def mean(self) -> float:
        return float(np.mean(self.accuracies))

    @property
    def std(self) -> float:
        """Sample standard deviation over seeds (0 for one seed)."""
        return float(np.std(self.accuracies, ddof=1)) if len(self.accuracies) > 1 else 0.0

    @property
    def low(self) -> float:
        return float(min(self.accuracies))

    @property
    def high(self) -> float:
        return float(max(self.accuracies))

    @property
    def macro_f1(self) -> float:
        return float(np.mean(self.macro_f1s))

    @property
    def seconds(self) -> float:
        return float(np.mean(self.train_seconds))


def summarise(points: list[dict]) -> dict[str, list[CurvePoint]]:
    """Groups `curve.json` points by side (in order of first appearance), each side's points by ascending size."""
    grouped: dict[str, dict[int, CurvePoint]] = {}
    for row in sorted(points, key=lambda r: (r["size"], r["seed"])):
        point = grouped.setdefault(row["side"], {}).setdefault(
            row["size"], CurvePoint(row["side"], row["size"], [], [], [], [])
        )
        point.seeds.append(row["seed"])
        point.accuracies.append(row["accuracy"])
        point.macro_f1s.append(row["macro_f1"])
        point.train_seconds.append(row["train_seconds"])
    order = list(dict.fromkeys(row["side"] for row in points))
    return {side: [grouped[side][size] for size in sorted(grouped[side])] for side in order}


def catch_up_size(points: list[dict], tolerance: float = CATCH_UP_TOLERANCE) -> int | None:
    """The smallest train size at which scratch's mean accuracy is within `tolerance` of finetune's, or None.

    Only sizes where both sides have points count. Means are over seeds.

        >>> rows = [{"side": s, "size": n, "seed": 0, "accuracy": a, "macro_f1": a, "train_seconds": 1}
        ...         for s, n, a in [("finetune", 100, 0.80), ("scratch", 100, 0.60),
        ...                         ("finetune", 1000, 0.85), ("scratch", 1000, 0.845)]]
        >>> catch_up_size(rows)
        1000
    """
    sides = summarise(points)
    finetune = {p.size: p.mean for p in sides.get(PRETRAINED, [])}
    scratch = {p.size: p.mean for p in sides.get(FROM_SCRATCH, [])}
    for size in sorted(set(finetune) & set(scratch)):
        # A hair of slack so that a gap of exactly one point, computed in floating point, counts as within.
        if scratch[size] >= finetune[size] - tolerance - 1e-12:
            return size
    return None


def gaps(points: list[dict]) -> dict[int, float]:
    """Finetune's mean accuracy minus scratch's, per train size both sides have."""
    sides = summarise(points)
    finetune = {p.size: p.mean for p in sides.get(PRETRAINED, [])}
    scratch = {p.size: p.mean for p in sides.get(FROM_SCRATCH, [])}
    return {size: finetune[size] - scratch[size] for size in sorted(set(finetune) & set(scratch))}


def catch_up_sentence(size: int | None, sizes: list[int], tolerance: float = CATCH_UP_TOLERANCE) -> str:
    """The curve's answer in words."""
    within = f"within {tolerance * 100:g} point{'' if tolerance == 0.01 else 's'} of the fine-tuned one"
    if size is None:
        return (
            f"The from-scratch model never came {within} in the range tried "
            f"({min(sizes):,} to {max(sizes):,} training examples)."
        )
    first = " (the smallest size tried)" if size == min(sizes) else ""
    return f"The from-scratch model first comes {within} (mean test accuracy over seeds) at {size:,} training examples{first}."
