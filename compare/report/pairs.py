"""results.json `comparisons` (every pair of models, p-values Holm-adjusted) and `gap_closed`, with more than two
models.

`comparison` stays the first pair (finetune against scratch from `compare run`); these sections add the
rest. `gap_closed` is written when the report has `finetune`, `scratch` and the distilled student.
"""

from __future__ import annotations

import itertools

import numpy as np

from compare.report.runs import EvalSplit, Model
from compare.scoring.gap import gap_closed
from compare.scoring.statistics import StatisticsArguments, holm, p_value, paired_comparison, verdict
from core.sides import FROM_SCRATCH, PRETRAINED, STUDENT


def comparisons(
    models: list[Model], decisions: dict[str, np.ndarray], split: EvalSplit, stats: StatisticsArguments
) -> list:
    """Every pair (a before b in the report's model order) with its paired differences, its test's p and winner;
    `<test>_p_holm` is that p Holm-adjusted over the pairs (`mcnemar_p_holm`, or `bootstrap_p_holm`)."""
    pairs = []
    for a, b in itertools.combinations([m.name for m in models], 2):
        paired = paired_comparison(split.gold, decisions[a], decisions[b], len(split.labels), stats, split.kind)
        result = {"a": a, "b": b, **paired}
        result["winner"], _ = verdict(a, b, result, metric=split.headline)
        pairs.append(result)
    test = "mcnemar_p" if "mcnemar_p" in pairs[0] else "bootstrap_p"
    for pair, adjusted in zip(pairs, holm([p_value(p) for p in pairs])):
        pair[f"{test}_holm"] = adjusted
    return pairs


def pair_sections(models: list[Model], decisions: dict[str, np.ndarray], split: EvalSplit, stats) -> dict:
    """`comparisons` with more than two models, and `gap_closed` when the distilled student is among them."""
    if len(models) <= 2:
        return {}
    sections = {"comparisons": comparisons(models, decisions, split, stats)}
    if {PRETRAINED, FROM_SCRATCH, STUDENT} <= set(decisions):
        preds = [decisions[name] for name in (PRETRAINED, FROM_SCRATCH, STUDENT)]
        sections["gap_closed"] = gap_closed(split.gold, *preds, len(split.labels), stats, split.kind)
    return sections
