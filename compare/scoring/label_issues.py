"""Which gold labels to doubt: cleanlab's label-quality scores over both models' out-of-sample probabilities.

Two models that confidently disagree with a gold label on the same example are the cheapest good evidence that
the label is wrong (Northcutt et al. 2021 found at least 3.3% label errors across ten test sets). Neither model
trained on the validation or the evaluated split, so their probabilities there are out of sample; with
`compare run --audit-train K` the train split is audited too, from K-fold cross-validated probabilities of small
from-scratch models (`compare.run.audit`).

Per example, the label quality (0 to 1; lower is more doubted) is cleanlab's ensemble score over the models'
probabilities (`cleanlab.rank.get_label_quality_ensemble_scores`; for multi-label,
`cleanlab.multilabel_classification.get_label_quality_scores` of the models' mean probabilities), and an example is
doubted when cleanlab's confident learning flags it (`cleanlab.filter.find_label_issues` on the mean probabilities,
or its multi-label variant). The suggested label is what the mean probabilities decide. A regression task has
values, not labels: cleanlab scores classes, so nothing is doubted there. Each kind's `label_doubts` calls the
function of this module that serves it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np

from compare.kinds import reported
from compare.scoring.statistics import StatisticsArguments, interval, resampled_scores

logger = logging.getLogger(__name__)

EXAMPLES = 20  # the most doubted examples of the evaluated split the report shows


@dataclass
class SplitDoubts:
    """One audited split: each example's label quality (n,), whether cleanlab flags it (n,) and the suggested
    answer (class ids (n,) or 0/1 rows (n, L))."""

    split: str
    gold: np.ndarray
    quality: np.ndarray
    flagged: np.ndarray
    suggested: np.ndarray


def single_label_doubts(gold: np.ndarray, outputs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(quality (n,), flagged (n,), suggested class ids (n,)) of class ids `gold` under each model's probabilities."""
    from cleanlab.filter import find_label_issues
    from cleanlab.rank import get_label_quality_ensemble_scores

    gold = np.asarray(gold, np.int64)
    outputs = [np.asarray(p, np.float64) for p in outputs]
    mean = np.mean(outputs, axis=0)  # (n, C)
    quality = get_label_quality_ensemble_scores(gold, outputs, verbose=False)
    # one process: a worker pool forked from the report inherits its signal handlers and dies loudly on exit
    flagged = find_label_issues(gold, mean, n_jobs=1)
    return np.asarray(quality, np.float64), np.asarray(flagged, bool), mean.argmax(axis=1)


def multilabel_doubts(
    gold: np.ndarray, outputs: list[np.ndarray], thresholds: list[float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(quality (n,), flagged (n,), suggested 0/1 rows (n, L)) of 0/1 rows `gold` under the models' mean label
    probabilities, the suggestion decided at `thresholds` (the models' mean per label)."""
    from cleanlab.multilabel_classification import get_label_quality_scores
    from cleanlab.multilabel_classification.filter import find_label_issues

    labels = [np.flatnonzero(row).tolist() for row in np.asarray(gold)]
    mean = np.mean([np.asarray(p, np.float64) for p in outputs], axis=0)  # (n, L)
    quality = get_label_quality_scores(labels, mean)
    flagged = find_label_issues(labels, mean, n_jobs=1)  # one process, as above
    return np.asarray(quality, np.float64), np.asarray(flagged, bool), (mean >= np.asarray(thresholds)).astype(np.int64)


def audit_split(kind: Any, split: str, gold: np.ndarray, outputs: list[np.ndarray], thresholds: Any) -> SplitDoubts:
    """`reported(kind).label_doubts` of one split, as a `SplitDoubts`."""
    quality, flagged, suggested = reported(kind).label_doubts(gold, outputs, thresholds)
    return SplitDoubts(split, np.asarray(gold), quality, flagged, suggested)


def issues(audits: list[SplitDoubts], kind: Any, labels: list[str]) -> list[dict]:
    """results.json `label_issues`: every flagged example of every audited split, `{"split", "index", "given",
    "suggested", "score"}`, from most to least doubted (lowest label quality first)."""
    rows = [
        {
            "split": audit.split,
            "index": int(i),
            "given": kind.answer(labels, audit.gold[i]),
            "suggested": kind.answer(labels, audit.suggested[i]),
            "score": round(float(audit.quality[i]), 6),
        }
        for audit in audits
        for i in np.flatnonzero(audit.flagged)
    ]
    return sorted(rows, key=lambda row: row["score"])


def without_doubted(
    audit: SplitDoubts, decisions: dict[str, np.ndarray], kind: Any, num_labels: int, stats: StatisticsArguments
) -> dict[str, dict]:
    """Each model's two scores on the evaluated split without its doubted examples, with bootstrap intervals."""
    keep = ~audit.flagged
    result = {}
    for name, decided in decisions.items():
        scores = reported(kind).point_scores(audit.gold[keep], decided[keep], num_labels)
        (samples,) = resampled_scores(audit.gold[keep], [decided[keep]], num_labels, stats, kind)
        result[name] = {
            "n": int(keep.sum()),
            **scores,
            **{f"{metric}_ci": interval(values) for metric, values in samples.items()},
        }
    return result


def doubted_examples(
    audit: SplitDoubts,
    texts: list[str],
    pairs: list[str] | None,
    outputs: dict[str, np.ndarray],
    decisions: dict[str, np.ndarray],
    kind: Any,
    labels: list[str],
    limit: int = EXAMPLES,
) -> list[dict]:
    """The evaluated split's most doubted examples: text (and second text), given and suggested label, the label
    quality and each model's answer with its probabilities (as predictions.jsonl gives them)."""
    flagged = np.flatnonzero(audit.flagged)
    ranked = flagged[np.argsort(audit.quality[flagged], kind="stable")][:limit]
    return [
        {
            "index": int(i),
            "text": texts[i],
            **({"text_pair": pairs[i]} if pairs is not None else {}),
            "given": kind.answer(labels, audit.gold[i]),
            "suggested": kind.answer(labels, audit.suggested[i]),
            "score": float(audit.quality[i]),
            "models": {
                name: reported(kind).prediction(labels, outputs[name][i], decisions[name][i]) for name in outputs
            },
        }
        for i in ranked
    ]


def label_audit(
    split: Any,
    outputs: dict[str, np.ndarray],
    decisions: dict[str, np.ndarray],
    thresholds: dict[str, list[float] | None],
    stats: StatisticsArguments,
    others: dict[str, tuple[np.ndarray, list[np.ndarray]]],
) -> tuple[dict, list[dict], np.ndarray | None]:
    """The report's label audit of the evaluated split (`split`, a `compare.report.runs.EvalSplit`) and of the
    `others` (split name -> (gold, each model's out-of-sample probabilities)).

    Returns:
        (results.json `label_audit`, results.json `label_issues`, each evaluated example's label quality (n,),
        None where nothing is audited).
    """
    kind, labels = split.kind, split.labels
    if not kind.has_labels:
        note = f"{kind.title}: the gold answers are values, and cleanlab scores the quality of class labels only."
        return {"audited": False, "note": note}, [], None
    mean_thresholds = None
    if reported(kind).decides_by_thresholds:
        mean_thresholds = np.mean([thresholds[name] for name in outputs], axis=0).tolist()
    audits = [audit_split(kind, split.name, split.gold, list(outputs.values()), mean_thresholds)]
    audits += [audit_split(kind, name, gold, probs, mean_thresholds) for name, (gold, probs) in others.items()]
    evaluated = audits[0]
    section = {
        "audited": True,
        "method": "cleanlab confident learning (find_label_issues) over the models' mean probabilities; label "
        "quality from cleanlab.rank (ensemble over the models)",
        "splits": {a.split: {"n": len(a.gold), "doubted": int(a.flagged.sum())} for a in audits},
        "without_doubted": without_doubted(evaluated, decisions, kind, len(labels), stats),
        "examples": doubted_examples(evaluated, split.texts, split.pairs, outputs, decisions, kind, labels),
    }
    return section, issues(audits, kind, labels), evaluated.quality
