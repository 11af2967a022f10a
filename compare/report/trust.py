"""How far to trust the models' probabilities and the gold labels: the report's calibration entries and label audit.

After the models are scored (`compare.report.command.score_models`), `assess` adds to each model's results.json
entry its calibration before and after temperature scaling (`compare.scoring.calibration.calibration_entries`),
predicts the validation split with each model's primary run (the report scores one split; validation is out of
sample for both models too), and audits the gold labels of both splits, and of train when `compare run
--audit-train` cross-validated it (`compare.scoring.label_issues`). What it adds to results.json:
`label_audit`, `label_issues` and `trust_seconds`; to predictions.jsonl, each row's `label_quality`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from compare.report.runs import EvalSplit, Model
from compare.scoring.calibration import calibration_entries
from compare.scoring.label_issues import label_audit
from compare.scoring.statistics import StatisticsArguments
from compare.scoring.timing import predict_split

VALIDATION = "validation"


@dataclass
class Trust:
    """What `assess` found: results.json's new sections, and the evaluated split's label quality per example (None
    where nothing was audited)."""

    sections: dict[str, Any] = field(default_factory=dict)
    quality: np.ndarray | None = None


def assess(
    models: list[Model],
    split: EvalSplit,
    outputs: dict[str, np.ndarray],
    decisions: dict[str, np.ndarray],
    entries: dict[str, dict],
    stats: StatisticsArguments,
    loader: Callable,
    train_audit: dict | None = None,
) -> Trust:
    """Adds each model's calibration entries to `entries` and audits the labels; `train_audit` is `compare run
    --audit-train`'s cross-validated probabilities of train (`compare.run.audit`), or None."""
    kind = split.kind
    start = time.perf_counter()
    for model in models:
        temperatures = model.primary.record.temperatures
        entries[model.name].update(calibration_entries(kind, outputs[model.name], split.gold, temperatures, stats))
    calibration_seconds = time.perf_counter() - start
    start = time.perf_counter()
    others = {}
    if kind.has_labels and split.name != VALIDATION:
        others[VALIDATION] = (split.part(VALIDATION)[2], validation_outputs(models, split, loader))
    if kind.has_labels and train_audit is not None:
        others["train"] = (np.asarray(train_audit["gold"]), [np.asarray(train_audit["probabilities"])])
    thresholds = {m.name: m.primary.record.thresholds for m in models}
    section, issues, quality = label_audit(split, outputs, decisions, thresholds, stats, others)
    if train_audit is not None:
        section["train_audit"] = {
            key: value for key, value in train_audit.items() if key not in ("gold", "probabilities")
        }
    seconds = {"calibration": calibration_seconds, "label_audit": time.perf_counter() - start}
    return Trust({"label_audit": section, "label_issues": issues, "trust_seconds": seconds}, quality)


def validation_outputs(models: list[Model], split: EvalSplit, loader: Callable) -> list[np.ndarray]:
    """Each model's primary run's probabilities on the validation split, which neither trained on."""
    texts, pairs, _ = split.part(VALIDATION)
    found = []
    for model in models:
        classifier = loader(model.primary.path, model.name)
        found.append(predict_split(classifier, texts, pairs)[0])
        del classifier
    return found
