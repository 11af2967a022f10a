"""How sure we are about BLEU and chrF++: bootstrap intervals and paired bootstrap resampling (Koehn 2004).

Corpus BLEU and chrF++ are not means of sentence scores, so a resample is scored from the sum of its
sentences' sufficient statistics (n-gram matches and totals), exactly as sacrebleu scores a corpus. Every
system is resampled on the same sentences, so the interval of a difference is paired: it reflects how two
systems fare on the same test sentences, and its p-value is classification's paired bootstrap p-value
(`compare.scoring.statistics.paired_p_value`). The winner rule is classification's (`compare.scoring.statistics.
verdict`): a winner only when the paired 95% interval of the BLEU difference excludes 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from compare.scoring.metrics.sacrebleu_bleu import make_bleu
from compare.scoring.metrics.sacrebleu_chrf import make_chrf
from compare.scoring.statistics import CONFIDENCE, StatisticsArguments, interval, paired_p_value

METRICS = ("bleu", "chrf")


@dataclass
class SentenceStats:
    """One system's per-sentence sufficient statistics for each metric: {metric: (n, k) array}."""

    stats: dict[str, np.ndarray]

    def score(self, metric: str, rows: np.ndarray | None = None) -> float:
        """The corpus score of the sentences `rows` (all when None), from their summed statistics."""
        table = self.stats[metric] if rows is None else self.stats[metric][rows]
        return score_from_sums(metric, table.sum(axis=0))

    def sentence_scores(self, metric: str) -> np.ndarray:
        """Each sentence scored alone (sentence chrF++ is what sacrebleu's `sentence_score` gives)."""
        return np.array([score_from_sums(metric, row) for row in self.stats[metric]])


_SCORERS = {}


def _scorer(metric: str):
    if metric not in _SCORERS:
        _SCORERS[metric] = make_bleu() if metric == "bleu" else make_chrf()
    return _SCORERS[metric]


def score_from_sums(metric: str, sums: np.ndarray) -> float:
    return float(_scorer(metric)._compute_score_from_stats(list(sums)).score)


def sentence_stats(hypotheses: list[str], references: list[str]) -> SentenceStats:
    """The statistics sacrebleu sums to score a corpus, one row per sentence."""
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} translations for {len(references)} references; give one per sentence.")
    out = {}
    for metric in METRICS:
        rows = _scorer(metric)._extract_corpus_statistics(hypotheses, [references])
        out[metric] = np.asarray(rows, dtype=np.float64)  # (n, k)
    return SentenceStats(out)


def resample_counts(n: int, args: StatisticsArguments) -> np.ndarray:
    """(R, n) how often each sentence is drawn in each of R resamples of n sentences with replacement."""
    rng = np.random.default_rng(args.bootstrap_seed)
    idx = rng.integers(0, n, size=(args.bootstrap_resamples, n))
    counts = np.zeros((args.bootstrap_resamples, n), dtype=np.float64)
    np.add.at(counts, (np.arange(args.bootstrap_resamples)[:, None], idx), 1)
    return counts


def resampled_scores(system: SentenceStats, counts: np.ndarray) -> dict[str, np.ndarray]:
    """Each metric's corpus score on every resample: {metric: (R,)}."""
    return {metric: np.array([score_from_sums(metric, s) for s in counts @ system.stats[metric]]) for metric in METRICS}


def paired_comparison(a: str, b: str, scores: dict, samples: dict) -> dict:
    """System a against b: point differences, paired 95% intervals, p-values, winner and verdict.

    Args:
        scores: {system: {"bleu": float, "chrf": float}} point estimates.
        samples: {system: {"bleu": (R,), "chrf": (R,)}} on the same resamples.
    """
    result = {"a": a, "b": b}
    for metric in METRICS:
        diffs = samples[a][metric] - samples[b][metric]
        result[f"{metric}_diff"] = scores[a][metric] - scores[b][metric]
        result[f"{metric}_diff_ci"] = interval(diffs)
        result[f"{metric}_p"] = paired_p_value(diffs)
    result["winner"], result["verdict"] = verdict(result)
    return result


def verdict(comparison: dict) -> tuple[str | None, str]:
    """Names a winner only when the paired 95% interval of the BLEU difference excludes 0.

    Returns:
        (winner or None, a sentence saying why, with the chrF++ difference beside it).
    """
    a, b = comparison["a"], comparison["b"]
    lo, hi = comparison["bleu_diff_ci"]
    clo, chi = comparison["chrf_diff_ci"]
    ci = (
        f"{CONFIDENCE:.0%} interval of {a} minus {b}: BLEU [{lo:+.1f}, {hi:+.1f}], "
        f"chrF++ [{clo:+.1f}, {chi:+.1f}]; paired bootstrap p = {comparison['bleu_p']:.3g}"
    )
    if lo <= 0 <= hi:
        return None, f"No clear winner between {a} and {b}: the {ci}."
    winner, loser = (a, b) if lo > 0 else (b, a)
    return winner, f"{winner} beats {loser} by {abs(comparison['bleu_diff']):.1f} BLEU ({ci})."
