"""Choosing among tuning trials on their validation score, and the expected best of n trials.

The score is the task's headline (`compare.scoring.wording`: accuracy, macro-F1 or Spearman), as each trial's
run.json `validation` records it. Selection sees validation scores only: `select_trial` is handed nothing else,
so a test score can
never choose a model. `expected_max` is the expected validation performance curve of Dodge et al.
(2019), "Show Your Work": with the N observed values sorted, v_(1) <= ... <= v_(N), the expected maximum
of n draws (with replacement) from them is

    E[max of n] = sum_i v_(i) * ((i / N)^n - ((i - 1) / N)^n),        n = 1 .. N,

since (i / N)^n is the chance that all n draws are at most v_(i). It says how much of a model's tuned
score is owed to the number of trials, and lets two sides be compared at the same tuning budget.

Examples:
    >>> [round(v, 4) for v in expected_max([0.3, 0.1, 0.2])]
    [0.2, 0.2444, 0.2667]
    >>> select_trial([0.81, 0.84, 0.84])
    1
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def expected_max(values: Sequence[float]) -> list[float]:
    """E[max of n draws with replacement from `values`] for n = 1 .. len(values)."""
    _check(values)
    v = np.sort(np.asarray(values, dtype=float))  # (N,)
    count = len(v)
    i = np.arange(1, count + 1)  # (N,)
    n = np.arange(1, count + 1)[:, None]  # (N, 1)
    weights = (i / count) ** n - ((i - 1) / count) ** n  # (N, N): row n, the chance v_(i) is the max
    return [float(x) for x in weights @ v]


def select_trial(validation_scores: Sequence[float]) -> int:
    """The index of the trial with the highest validation score; a tie goes to the earlier trial."""
    _check(validation_scores)
    return int(np.argmax(np.asarray(validation_scores, dtype=float)))


def tuning_record(trials: list[dict], metric: str = "accuracy") -> dict:
    """One side's results.json `tuning.<side>` section from its finished trials.

    Args:
        trials: `[{"params", "validation_<metric>", "run"}]` in trial order (any other keys are kept but
            never read).
        metric: the headline score the trials are chosen by.

    Returns:
        `{"metric": metric, "trials": trials, "expected_max_validation": [n = 1..N], "selected": index of the chosen
        trial}`.
    """
    scores = [trial[f"validation_{metric}"] for trial in trials]
    return {
        "metric": metric,
        "trials": trials,
        "expected_max_validation": expected_max(scores),
        "selected": select_trial(scores),
    }


def _check(values: Sequence[float]) -> None:
    if len(values) == 0:
        raise ValueError("no trial values: tuning needs at least one finished trial (--tune N with N >= 1)")
    bad = [(i, v) for i, v in enumerate(values) if not math.isfinite(v)]
    if bad:
        raise ValueError(f"trial {bad[0][0]} has validation score {bad[0][1]!r}; every trial needs a finite score")
