"""Scores of every system's translations of one split: corpus BLEU and chrF++ with intervals, and breakdowns.

The point scores come from the suite's `evaluate` modules (`sacrebleu_bleu`, `sacrebleu_chrf`); intervals,
paired comparisons and the per-domain and per-length scores come from the same sacrebleu statistics summed
over the sentences concerned (`compare.translation.statistics`), so every number is a corpus score.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from compare.scoring.metrics import load_metric
from compare.scoring.statistics import StatisticsArguments, interval
from compare.translation.statistics import (
    METRICS,
    SentenceStats,
    paired_comparison,
    resample_counts,
    resampled_scores,
    sentence_stats,
)
from core.pairs import PairSplit

# Source-length buckets, in words: (label, fewest, most).
LENGTH_BUCKETS = (("1-5", 1, 5), ("6-10", 6, 10), ("11-20", 11, 20), ("21-40", 21, 40), ("41+", 41, None))


def corpus_scores(hypotheses: list[str], references: list[str]) -> dict:
    """`bleu`, `chrf` and their sacrebleu `signatures`, through the local evaluate modules."""
    bleu = load_metric("sacrebleu_bleu").compute(predictions=hypotheses, references=references)
    chrf = load_metric("sacrebleu_chrf").compute(predictions=hypotheses, references=references)
    return {
        "bleu": bleu["bleu"],
        "chrf": chrf["chrf"],
        "signatures": {"bleu": bleu["signature"], "chrf": chrf["signature"]},
    }


def length_bucket(source: str) -> str:
    words = len(source.split())
    for label, low, high in LENGTH_BUCKETS:
        if words >= low and (high is None or words <= high):
            return label
    return LENGTH_BUCKETS[0][0]  # an empty source counts with the shortest


def groups(keys: list[str] | None, order: list[str] | None = None) -> dict[str, np.ndarray]:
    """Row indices of each group, in `order` (else sorted); groups with no rows left out."""
    if keys is None:
        return {}
    names = order or sorted(set(keys))
    rows = {name: np.array([i for i, k in enumerate(keys) if k == name], dtype=int) for name in names}
    return {name: idx for name, idx in rows.items() if len(idx)}


def breakdown(stats: SentenceStats, rows: dict[str, np.ndarray]) -> dict:
    """{group: {n, bleu, chrf}}: corpus scores of each group's sentences."""
    return {name: {"n": len(idx), **{m: stats.score(m, idx) for m in METRICS}} for name, idx in rows.items()}


def score_systems(
    outputs: dict[str, list[str]], split: PairSplit, args: StatisticsArguments
) -> tuple[dict[str, dict], list[dict], dict[str, SentenceStats], dict]:
    """Scores every system on `split` and compares every pair of them.

    Args:
        outputs: system name -> its translation of each source of `split`, in order.
    Returns:
        (per system {bleu, bleu_ci, chrf, chrf_ci, per_domain, per_length}, the pairwise comparisons in the
        order of `outputs`, the sentence statistics per system, sacrebleu's signatures).
    """
    counts = resample_counts(len(split), args)
    domains = groups(split.domains)
    lengths = groups([length_bucket(s) for s in split.sources], [label for label, _, _ in LENGTH_BUCKETS])
    entries, samples, stats, signatures = {}, {}, {}, {}
    for name, hypotheses in outputs.items():
        point = corpus_scores(hypotheses, split.targets)
        signatures = point.pop("signatures")
        stats[name] = sentence_stats(hypotheses, split.targets)
        samples[name] = resampled_scores(stats[name], counts)
        entries[name] = {
            "bleu": point["bleu"],
            "bleu_ci": interval(samples[name]["bleu"]),
            "chrf": point["chrf"],
            "chrf_ci": interval(samples[name]["chrf"]),
            "per_domain": breakdown(stats[name], domains),
            "per_length": breakdown(stats[name], lengths),
        }
    comparisons = [paired_comparison(a, b, entries, samples) for a, b in combinations(outputs, 2)]
    return entries, comparisons, stats, signatures


def largest_differences(
    outputs: dict[str, list[str]], stats: dict[str, SentenceStats], split: PairSplit, limit: int
) -> list[dict]:
    """The test sentences on which the systems' sentence chrF++ spreads the most, widest first.

    Returns:
        up to `limit` rows {index, source, reference, domain, spread, chrf {name: score}, translations {name: text}}.
    """
    names = [name for name in outputs if name != "copy_source"] or list(outputs)
    if len(names) < 2:
        return []
    table = np.stack([stats[name].sentence_scores("chrf") for name in names])  # (systems, n)
    spread = table.max(axis=0) - table.min(axis=0)
    order = np.argsort(-spread, kind="stable")[:limit]
    return [
        {
            "index": int(i),
            "source": split.sources[i],
            "reference": split.targets[i],
            "domain": None if split.domains is None else split.domains[i],
            "spread": float(spread[i]),
            "chrf": {name: float(table[k, i]) for k, name in enumerate(names)},
            "translations": {name: outputs[name][i] for name in outputs},
        }
        for i in order
    ]
