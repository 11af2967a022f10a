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
    >>> record = tuning_record([{"state": "pruned", "params": {"max_steps": 500}, "steps": 200, "validation_accuracy": 0.9},
    ...                         {"state": "complete", "params": {"max_steps": 500}, "steps": 500, "validation_accuracy": 0.8}])
    >>> record["selected"], record["pruned"], record["saved_steps"]
    (1, 1, 300)
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


def tuning_record(
    trials: list[dict], metric: str = "accuracy", expected: bool = True, study: str | None = None
) -> dict:
    """One side's results.json `tuning.<side>` section from its trials.

    Args:
        trials: `[{"state", "params", "validation_<metric>", "run", ...}]` by slot; `state` is `complete`,
            `pruned` or `fail` (a trial without `state` counts as complete). Only completed trials are chosen
            from and enter the expected-maximum curve: a pruned trial's score is that of a training cut short.
        metric: the headline score the trials are chosen by.
        expected: whether the trials are independent draws, so that the expected-maximum curve means what it
            says (a random search; not TPE, whose draws follow the earlier trials).
        study: the Optuna study the trials are read from.

    Returns:
        `{"metric", "study", "trials", "expected_max_validation": [n = 1..completed] or None, "selected": index of
        the chosen trial in `trials` (None when none completed), "pruned": how many were pruned, "saved_steps":
        the optimizer steps the pruned trials did not train of their `max_steps`}`.
    """
    completed = [i for i, trial in enumerate(trials) if trial.get("state", "complete") == "complete"]
    scores = [trials[i][f"validation_{metric}"] for i in completed]
    pruned = [trial for trial in trials if trial.get("state") == "pruned"]
    saved = [trial["params"]["max_steps"] - trial["steps"] for trial in pruned if "max_steps" in trial["params"]]
    return {
        "metric": metric,
        "study": study,
        "trials": trials,
        "expected_max_validation": expected_max(scores) if expected and scores else None,
        "selected": completed[select_trial(scores)] if scores else None,
        "pruned": len(pruned),
        "saved_steps": int(sum(max(step, 0) for step in saved if step is not None)),
    }


def _check(values: Sequence[float]) -> None:
    if len(values) == 0:
        raise ValueError("no trial values: tuning needs at least one finished trial (--tune N with N >= 1)")
    bad = [(i, v) for i, v in enumerate(values) if not math.isfinite(v)]
    if bad:
        raise ValueError(f"trial {bad[0][0]} has validation score {bad[0][1]!r}; every trial needs a finite score")
