"""How sure we are: bootstrap intervals, paired bootstrap differences, McNemar's test and the verdict.

Every interval is a 95% percentile bootstrap over the examples of the evaluated split. The paired
bootstrap draws the same examples for both models, so the interval of a difference reflects how the two
models err on the same texts rather than two independent noises. With several training seeds per model,
the spread across seeds (how much is luck of the initialisation and subset) is reported beside it and the
verdict asks both questions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from core.metrics import accuracy_and_macro_f1, confusion_counts

CONFIDENCE = 0.95
CHUNK = 64  # resamples drawn at a time, which bounds memory on large test splits


@dataclass
class StatisticsArguments:
    """How the statistics are computed; recorded under `settings` in results.json."""

    _argument_group_name = "statistics options"

    bootstrap_resamples: int = field(default=1000, metadata={"help": "Bootstrap resamples per interval."})
    bootstrap_seed: int = field(default=0, metadata={"help": "Seed of the bootstrap resampling."})
    ece_bins: int = field(default=15, metadata={"help": "Equal-width confidence bins for calibration error."})

    def __post_init__(self) -> None:
        if self.bootstrap_resamples < 100:
            raise ValueError(f"--bootstrap-resamples must be at least 100, got {self.bootstrap_resamples}.")
        if not 2 <= self.ece_bins <= 100:
            raise ValueError(f"--ece-bins must be between 2 and 100, got {self.ece_bins}.")

    def settings(self) -> dict:
        return {
            "bootstrap_resamples": self.bootstrap_resamples,
            "bootstrap_seed": self.bootstrap_seed,
            "confidence": CONFIDENCE,
            "ece_bins": self.ece_bins,
        }


def resampled_scores(gold: np.ndarray, preds: list[np.ndarray], num_classes: int, args: StatisticsArguments) -> list:
    """Accuracy and macro-F1 of each prediction vector on the same bootstrap resamples.

    Returns:
        one (accuracy, macro_f1) pair of arrays of length `bootstrap_resamples` per entry of `preds`.
    """
    rng = np.random.default_rng(args.bootstrap_seed)
    n = len(gold)
    out = [([], []) for _ in preds]
    for start in range(0, args.bootstrap_resamples, CHUNK):
        idx = rng.integers(0, n, size=(min(CHUNK, args.bootstrap_resamples - start), n))  # (R, n)
        for (accs, f1s), pred in zip(out, preds):
            accuracy, macro_f1 = accuracy_and_macro_f1(confusion_counts(gold[idx], pred[idx], num_classes))
            accs.append(accuracy)
            f1s.append(macro_f1)
    return [(np.concatenate(accs), np.concatenate(f1s)) for accs, f1s in out]


def interval(samples: np.ndarray) -> list[float]:
    """The central 95% percentile interval of bootstrap samples."""
    tail = (1 - CONFIDENCE) / 2 * 100
    lo, hi = np.percentile(samples, [tail, 100 - tail])
    return [float(lo), float(hi)]


def model_intervals(gold: np.ndarray, pred: np.ndarray, num_classes: int, args: StatisticsArguments) -> dict:
    """95% bootstrap intervals of one model's accuracy and macro-F1."""
    ((accuracy, macro_f1),) = resampled_scores(gold, [pred], num_classes, args)
    return {"accuracy_ci": interval(accuracy), "macro_f1_ci": interval(macro_f1)}


def paired_comparison(
    gold: np.ndarray, pred_a: np.ndarray, pred_b: np.ndarray, num_classes: int, args: StatisticsArguments
) -> dict:
    """Differences a minus b with paired bootstrap intervals, and McNemar's exact test."""
    (acc_a, f1_a), (acc_b, f1_b) = resampled_scores(gold, [pred_a, pred_b], num_classes, args)
    point_a = accuracy_and_macro_f1(confusion_counts(gold, pred_a, num_classes))
    point_b = accuracy_and_macro_f1(confusion_counts(gold, pred_b, num_classes))
    from compare.scoring.metrics import load_metric  # evaluate loads TensorFlow: not for `--help`

    mcnemar = load_metric("mcnemar").compute(predictions1=pred_a, predictions2=pred_b, references=gold)
    return {
        "accuracy_diff": float(point_a[0][0] - point_b[0][0]),
        "accuracy_diff_ci": interval(acc_a - acc_b),
        "macro_f1_diff": float(point_a[1][0] - point_b[1][0]),
        "macro_f1_diff_ci": interval(f1_a - f1_b),
        "mcnemar_p": mcnemar["p_value"],
        "mcnemar_b": mcnemar["b"],
        "mcnemar_c": mcnemar["c"],
    }


def spread(values: list[float]) -> dict:
    """Mean and sample standard deviation (0 for a single value) of per-seed scores."""
    values = np.asarray(values, dtype=float)
    std = float(values.std(ddof=1)) if len(values) > 1 else 0.0
    return {"mean": float(values.mean()), "std": std}


def verdict(a: str, b: str, comparison: dict, seed_diffs: list[float] | None = None) -> tuple[str | None, str]:
    """Names the winner only when the paired 95% interval of the accuracy difference excludes 0 and,
    with several seeds, every seed's accuracy difference points the same way.

    Returns:
        (winner or None, a sentence saying why).
    """
    lo, hi = comparison["accuracy_diff_ci"]
    diff = comparison["accuracy_diff"]
    points = f"{abs(diff) * 100:.1f} points"
    ci = f"95% interval of {a} minus {b}: [{lo * 100:+.1f}, {hi * 100:+.1f}] points"
    if lo <= 0 <= hi:
        return None, f"No clear winner: the {ci} contains 0 (McNemar p = {comparison['mcnemar_p']:.3g})."
    winner, loser = (a, b) if lo > 0 else (b, a)
    sign = 1 if winner == a else -1
    if seed_diffs and len(seed_diffs) > 1:
        against = [d for d in seed_diffs if d * sign <= 0]
        if against:
            return None, (
                f"No clear winner: {winner} leads by {points} on the test examples ({ci}), but {len(against)} of "
                f"{len(seed_diffs)} training seeds do not favour it, so the lead is within seed-to-seed luck."
            )
        mean = spread(seed_diffs)
        return winner, (
            f"{winner} beats {loser} by {points} ({ci}; McNemar p = {comparison['mcnemar_p']:.3g}), and on every "
            f"one of {len(seed_diffs)} seeds (mean difference {abs(mean['mean']) * 100:.1f} ± "
            f"{mean['std'] * 100:.1f} points)."
        )
    return winner, f"{winner} beats {loser} by {points} ({ci}; McNemar p = {comparison['mcnemar_p']:.3g})."


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjustment of p-values for testing them together, in the order given.

    The i-th smallest p is multiplied by (m - i) for i = 0..m-1, each result kept at least as large as the
    one before it and at most 1, so the family-wise error rate stays at the level chosen.

        >>> holm([0.01, 0.04, 0.03])
        [0.03, 0.06, 0.06]
    """
    m = len(p_values)
    adjusted, running = [0.0] * m, 0.0
    for rank, i in enumerate(sorted(range(m), key=lambda k: p_values[k])):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = round(running, 15)
    return adjusted
