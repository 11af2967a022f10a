"""Quality of one model's outputs on a labelled split, through the suite's `evaluate` modules, for each kind of task.

A model's outputs are class probabilities (n, K) for a single label, independent label probabilities (n, L) for
multi-label, values (n,) for regression; its decisions are what it answers from them: class ids (n,), 0/1 rows
(n, L) by its thresholds, or the values themselves. Each kind's `report_scores` (`core.kinds`) calls the function
of this module that scores it, and `quick_scores` gives its two scores.
"""

from __future__ import annotations

import numpy as np

from compare.kinds import reported
from compare.scoring.calibration import expected_calibration_error, label_calibration, log_loss, reliability
from compare.scoring.metrics import load_metric
from compare.scoring.statistics import DEFAULT_KIND, StatisticsArguments, model_intervals
from core.classifier import Classifier
from core.kinds import Kind
from core.metrics import confusion_counts
from core.multilabel import label_counts


def decide(model: Classifier, outputs: np.ndarray) -> np.ndarray:
    """A model's decisions from its outputs as the scores take them (its kind's `decide`): class ids (n,) or 0/1
    label rows (n, L) by the thresholds its run.json records, or a regression model's values as they are."""
    return model.kind.decide(outputs, model.thresholds)


def single_label_score(probs: np.ndarray, gold: np.ndarray, labels: list[str], args: StatisticsArguments) -> dict:
    """Accuracy, F1s, MCC, calibration and bootstrap intervals of one model.

    Args:
        probs: (n, K) class probabilities.
        gold: (n,) gold label ids.
        labels: the K class names.
    Returns:
        the model's quality entries of results.json (`per_class` keyed by label name), plus `confusion`
        (K x K, rows gold) and `reliability` (per-bin table).
    """
    pred = probs.argmax(axis=1)
    ids = list(range(len(labels)))
    prf = load_metric("precision_recall_f1").compute(predictions=pred, references=gold, labels=ids)
    return {
        "accuracy": load_metric("accuracy").compute(predictions=pred, references=gold)["accuracy"],
        "macro_f1": prf["macro_f1"],
        "weighted_f1": prf["weighted_f1"],
        "mcc": load_metric("matthews_correlation").compute(predictions=pred, references=gold)["matthews_correlation"],
        "ece": expected_calibration_error(probs, gold, args.ece_bins),
        "log_loss": log_loss(probs, gold),
        **model_intervals(gold, pred, len(labels), args),
        "per_class": {
            label: {
                "precision": prf["precision"][k],
                "recall": prf["recall"][k],
                "f1": prf["f1"][k],
                "support": prf["support"][k],
            }
            for k, label in enumerate(labels)
        },
        "confusion": confusion_counts(gold, pred, len(labels))[0].tolist(),
        "reliability": reliability(probs, gold, args.ece_bins),
    }


def multilabel_score(
    probs: np.ndarray, decisions: np.ndarray, gold: np.ndarray, labels: list[str], args: StatisticsArguments, kind: Kind
) -> dict:
    """Micro- and macro-F1, subset accuracy, Hamming loss, per-label scores and each label's calibration.

    Args:
        probs: (n, L) independent label probabilities.
        decisions: (n, L) 0/1, the probabilities against the model's thresholds.
        gold: (n, L) 0/1.
        kind: the multi-label kind, whose two scores get intervals.
    """
    found = load_metric("multilabel").compute(predictions=decisions.tolist(), references=gold.tolist())
    counts = label_counts(gold, decisions)
    calibration = label_calibration(probs, gold, args.ece_bins)
    return {
        **{key: found[key] for key in ("micro_f1", "macro_f1", "subset_accuracy", "hamming_loss")},
        "ece": calibration["ece"],
        "log_loss": calibration["log_loss"],
        **model_intervals(gold, decisions, len(labels), args, kind),
        "per_class": {
            label: {
                "precision": _share(counts["tp"][k], counts["predicted"][k]),
                "recall": _share(counts["tp"][k], counts["actual"][k]),
                "f1": found["per_label_f1"][k],
                "support": int(counts["actual"][k]),
                "ece": calibration["ece_per_label"][k],
            }
            for k, label in enumerate(labels)
        },
        "reliability": calibration["reliability"],
    }


def regression_score(values: np.ndarray, gold: np.ndarray, args: StatisticsArguments, kind: Kind) -> dict:
    """Pearson, Spearman, MSE and MAE of predicted values against gold values, both (n,)."""
    found = load_metric("regression").compute(predictions=values.tolist(), references=gold.tolist())
    return {**found, **model_intervals(gold, values, 0, args, kind)}


def quick_scores(
    decisions: np.ndarray, gold: np.ndarray, num_labels: int, kind: Kind = DEFAULT_KIND
) -> dict[str, float]:
    """The kind's two scores only (`Kind.scores`: per seed, per curve point), through the evaluate modules."""
    return reported(kind).quick_scores(decisions, gold, num_labels)


def _share(part: int, whole: int) -> float:
    return float(part / whole) if whole else 0.0
