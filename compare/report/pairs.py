"""results.json `comparisons` (every pair of models, p-values Holm-adjusted), `gap_closed` and `lead_sources`, with
more than two models.

`comparison` stays the first pair (finetune against scratch from `compare run`); these sections add the
rest. `gap_closed` is written when the report has `finetune`, `scratch` and the distilled student; `lead_sources`
when it has `finetune`, `scratch` and the self-pretrained `scratch-pretrained` (`compare run --self-pretrain`).
"""

from __future__ import annotations

import itertools

import numpy as np

from compare.report.runs import EvalSplit, Model
from compare.scoring.gap import gap_closed
from compare.scoring.statistics import StatisticsArguments, holm, p_value, paired_comparison, verdict
from core.sides import FROM_SCRATCH, PRETRAINED, SELF_PRETRAINED, STUDENT

# The fine-tuned model's lead over the from-scratch one, and its two parts split at the self-pretrained model: what
# the pretraining objective alone gives on the task's own texts, and what the rest (the pretrained model's external
# data, its size and recipe) adds. Each is a difference a - b.
LEAD_PARTS = {
    "lead": (PRETRAINED, FROM_SCRATCH),
    "objective": (SELF_PRETRAINED, FROM_SCRATCH),
    "external_data": (PRETRAINED, SELF_PRETRAINED),
}


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
    if {PRETRAINED, FROM_SCRATCH, SELF_PRETRAINED} <= set(decisions):
        sections["lead_sources"] = lead_sources(decisions, split, stats)
    return sections


def lead_sources(decisions: dict[str, np.ndarray], split: EvalSplit, stats: StatisticsArguments) -> dict:
    """results.json `lead_sources`: for each of `LEAD_PARTS`, the models `a` and `b`, the headline's difference
    a - b and its paired bootstrap 95% interval (`diff`, `ci`); `metric`; and `objective_share`, the share of the
    lead the pretraining objective explains, (scratch-pretrained - scratch) / (finetune - scratch), with its
    interval (`objective_share_ci`; `gap_closed`'s computation)."""
    gold, num_labels, kind = split.gold, len(split.labels), split.kind
    metric, result = kind.headline, {"metric": kind.headline}
    for part, (a, b) in LEAD_PARTS.items():
        paired = paired_comparison(gold, decisions[a], decisions[b], num_labels, stats, kind)
        result[part] = {"a": a, "b": b, "diff": paired[f"{metric}_diff"], "ci": paired[f"{metric}_diff_ci"]}
    models = [decisions[name] for name in (PRETRAINED, FROM_SCRATCH, SELF_PRETRAINED)]
    share = gap_closed(gold, *models, num_labels, stats, kind)
    return {**result, "objective_share": share["value"], "objective_share_ci": share["ci"]}
