"""results.json `comparisons` (every pair of models, McNemar Holm-adjusted) and `gap_closed`, with more than two models.

`comparison` stays the first pair (finetune against scratch from `compare run`); these sections add the
rest. `gap_closed` is written when the report has `finetune`, `scratch` and the distilled student.
"""

from __future__ import annotations

import itertools

import numpy as np

from compare.report.runs import EvalSplit, Model
from compare.scoring.gap import gap_closed
from compare.scoring.statistics import StatisticsArguments, holm, paired_comparison, verdict
from core.sides import FROM_SCRATCH, PRETRAINED, STUDENT


def comparisons(
    models: list[Model], probs: dict[str, np.ndarray], split: EvalSplit, stats: StatisticsArguments
) -> list:
    """Every pair (a before b in the report's model order) with its paired differences, McNemar p and winner."""
    pairs = []
    for a, b in itertools.combinations([m.name for m in models], 2):
        pred_a, pred_b = probs[a].argmax(axis=1), probs[b].argmax(axis=1)
        result = {"a": a, "b": b, **paired_comparison(split.gold, pred_a, pred_b, len(split.labels), stats)}
        result["winner"], _ = verdict(a, b, result)
        pairs.append(result)
    for pair, adjusted in zip(pairs, holm([p["mcnemar_p"] for p in pairs])):
        pair["mcnemar_p_holm"] = adjusted
    return pairs


def pair_sections(models: list[Model], probs: dict[str, np.ndarray], split: EvalSplit, stats) -> dict:
    """`comparisons` with more than two models, and `gap_closed` when the distilled student is among them."""
    if len(models) <= 2:
        return {}
    sections = {"comparisons": comparisons(models, probs, split, stats)}
    if {PRETRAINED, FROM_SCRATCH, STUDENT} <= set(probs):
        preds = [probs[name].argmax(axis=1) for name in (PRETRAINED, FROM_SCRATCH, STUDENT)]
        sections["gap_closed"] = gap_closed(split.gold, *preds, len(split.labels), stats)
    return sections
