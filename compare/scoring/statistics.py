"""How sure we are: bootstrap intervals, paired bootstrap differences, significance tests and the verdict.

Every interval is a 95% percentile bootstrap over the examples of the evaluated split. The paired
bootstrap draws the same examples for both models, so the interval of a difference reflects how the two
models err on the same texts rather than two independent noises. With several training seeds per model,
the spread across seeds (how much is luck of the initialisation and subset) is reported beside it and the
verdict asks both questions.

Each kind of task (`core.kinds`) is scored by its two scores (`Kind.scores`, the headline first) on its own
decisions: class ids (single label), 0/1 rows (multi-label) or values (regression). The significance test
is the kind's (`ComparedKind.paired_test`): McNemar's exact test where each example is simply right or wrong (single
label), the paired bootstrap p-value (`paired_p_value`) where it is not.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from compare.kinds import reported
from compare.scoring import wording
from core import kinds
from core.kinds import Kind

CONFIDENCE = 0.95
CHUNK = 64  # resamples drawn at a time, which bounds memory on large test splits
DEFAULT_KIND = kinds.get(None)  # the kind a call that names none scores


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


def point_scores(gold: np.ndarray, pred: np.ndarray, num_labels: int, kind: Kind = DEFAULT_KIND) -> dict:
    """The kind's two scores (`Kind.scores`) of one set of decisions: class ids (n,), 0/1 rows (n, L) or values
    (n,)."""
    return reported(kind).point_scores(gold, pred, num_labels)


def resampled_scores(
    gold: np.ndarray,
    preds: list[np.ndarray],
    num_labels: int,
    args: StatisticsArguments,
    kind: Kind = DEFAULT_KIND,
) -> list[dict[str, np.ndarray]]:
    """The kind's two scores of each set of decisions in `preds` on the same bootstrap resamples of the examples.

    Returns:
        per entry of `preds`, {score: array of length `bootstrap_resamples`}.
    """
    rng = np.random.default_rng(args.bootstrap_seed)
    n = len(gold)
    out = [{metric: [] for metric in kind.scores} for _ in preds]
    for start in range(0, args.bootstrap_resamples, CHUNK):
        idx = rng.integers(0, n, size=(min(CHUNK, args.bootstrap_resamples - start), n))  # (R, n)
        for samples, pred in zip(out, preds):
            for metric, values in reported(kind).resampled_scores(gold, pred, idx, num_labels).items():
                samples[metric].append(values)
    return [{metric: np.concatenate(values) for metric, values in samples.items()} for samples in out]


def interval(samples: np.ndarray) -> list[float]:
    """The central 95% percentile interval of bootstrap samples."""
    tail = (1 - CONFIDENCE) / 2 * 100
    lo, hi = np.percentile(samples, [tail, 100 - tail])
    return [float(lo), float(hi)]


def model_intervals(
    gold: np.ndarray, pred: np.ndarray, num_labels: int, args: StatisticsArguments, kind: Kind = DEFAULT_KIND
) -> dict:
    """95% bootstrap intervals of one model's two scores: `{"<score>_ci": [lo, hi]}`."""
    (samples,) = resampled_scores(gold, [pred], num_labels, args, kind)
    return {f"{metric}_ci": interval(values) for metric, values in samples.items()}


def paired_p_value(diffs: np.ndarray) -> float:
    """Two-sided paired bootstrap p-value: twice the smaller share of resamples on either side of 0.

    Koehn (2004) calls a system better with 95% confidence when it wins in at least 95% of the resamples;
    the +1s keep the estimate from reaching 0 with finitely many resamples. Identical systems get 1.

        >>> paired_p_value(np.array([0.02, 0.01, -0.01, 0.03]))  # one of four resamples at or below 0
        0.8
        >>> paired_p_value(np.zeros(9))
        1.0
    """
    r = len(diffs)
    not_above, not_below = int((diffs <= 0).sum()), int((diffs >= 0).sum())
    return min(1.0, 2 * (min(not_above, not_below) + 1) / (r + 1))


def paired_comparison(
    gold: np.ndarray,
    pred_a: np.ndarray,
    pred_b: np.ndarray,
    num_labels: int,
    args: StatisticsArguments,
    kind: Kind = DEFAULT_KIND,
) -> dict:
    """Differences a minus b in the kind's two scores with paired bootstrap intervals, and the kind's test
    (`ComparedKind.paired_test`): McNemar's exact test (`mcnemar_p`, `mcnemar_b`, `mcnemar_c`) for a single label, else the
    paired bootstrap p-value of the headline's difference (`bootstrap_p`)."""
    samples_a, samples_b = resampled_scores(gold, [pred_a, pred_b], num_labels, args, kind)
    point_a = point_scores(gold, pred_a, num_labels, kind)
    point_b = point_scores(gold, pred_b, num_labels, kind)
    result = {}
    for metric in kind.scores:
        result[f"{metric}_diff"] = point_a[metric] - point_b[metric]
        result[f"{metric}_diff_ci"] = interval(samples_a[metric] - samples_b[metric])
    headline = kind.headline
    return {**result, **reported(kind).paired_test(gold, pred_a, pred_b, samples_a[headline] - samples_b[headline])}


def p_value(comparison: dict) -> float:
    """The comparison's significance: McNemar's p for a single label, else the paired bootstrap p."""
    return comparison["mcnemar_p"] if "mcnemar_p" in comparison else comparison["bootstrap_p"]


def significance_text(comparison: dict) -> str:
    """`McNemar p = 0.012` or `paired bootstrap p = 0.012`."""
    test = "McNemar" if "mcnemar_p" in comparison else "paired bootstrap"
    return f"{test} p = {p_value(comparison):.3g}"


def spread(values: list[float]) -> dict:
    """Mean and sample standard deviation (0 for a single value) of per-seed scores."""
    values = np.asarray(values, dtype=float)
    std = float(values.std(ddof=1)) if len(values) > 1 else 0.0
    return {"mean": float(values.mean()), "std": std}


def verdict(
    a: str, b: str, comparison: dict, seed_diffs: list[float] | None = None, metric: str = "accuracy"
) -> tuple[str | None, str]:
    """Names the winner only when the paired 95% interval of the difference in `metric` (the headline) excludes 0
    and, with several seeds, every seed's difference points the same way.

    Returns:
        (winner or None, a sentence saying why).
    """
    lo, hi = comparison[f"{metric}_diff_ci"]
    diff = comparison[f"{metric}_diff"]
    size = wording.amount(metric, diff)
    ci = f"95% interval of {a} minus {b}: {wording.signed_interval(metric, [lo, hi])}"
    if lo <= 0 <= hi:
        return None, f"No clear winner: the {ci} contains 0 ({significance_text(comparison)})."
    winner, loser = (a, b) if lo > 0 else (b, a)
    sign = 1 if winner == a else -1
    if seed_diffs and len(seed_diffs) > 1:
        against = [d for d in seed_diffs if d * sign <= 0]
        if against:
            return None, (
                f"No clear winner: {winner} leads by {size} on the test examples ({ci}), but {len(against)} of "
                f"{len(seed_diffs)} training seeds do not favour it, so the lead is within seed-to-seed luck."
            )
        mean = spread(seed_diffs)
        return winner, (
            f"{winner} beats {loser} by {size} ({ci}; {significance_text(comparison)}), and on every one of "
            f"{len(seed_diffs)} seeds (mean difference {wording.magnitude(metric, mean['mean'])} ± "
            f"{wording.size(metric, mean['std'])})."
        )
    return winner, f"{winner} beats {loser} by {size} ({ci}; {significance_text(comparison)})."


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
