"""How `compare` scores and words single-label classification: accuracy and macro-F1, McNemar's test."""

from __future__ import annotations

from typing import Any

import numpy as np

from compare.kinds.base import ComparedKind, register
from core.kinds import SingleLabel
from core.metrics import accuracy_and_macro_f1, confusion_counts


@register(SingleLabel)
class ComparedSingleLabel(ComparedKind):
    table_columns = (("mcc", "MCC", "{:.3f}"), ("ece", "ECE", "{:.3f}"), ("log_loss", "log loss", "{:.3f}"))
    figures = ("confusion_matrices", "reliability", "per_class_f1")
    disagreement_order = "the most confident disagreements first (label and the probability the model gave it)"

    def point_scores(self, gold: np.ndarray, pred: np.ndarray, num_labels: int) -> dict[str, float]:
        accuracy, macro_f1 = accuracy_and_macro_f1(confusion_counts(gold, pred, num_labels))
        return {"accuracy": float(accuracy[0]), "macro_f1": float(macro_f1[0])}

    def resampled_scores(
        self, gold: np.ndarray, pred: np.ndarray, idx: np.ndarray, num_labels: int
    ) -> dict[str, np.ndarray]:
        """All R resamples at once, from their confusion matrices."""
        accuracy, macro_f1 = accuracy_and_macro_f1(confusion_counts(gold[idx], pred[idx], num_labels))
        return {"accuracy": accuracy, "macro_f1": macro_f1}

    def paired_test(
        self, gold: np.ndarray, pred_a: np.ndarray, pred_b: np.ndarray, headline_diffs: np.ndarray
    ) -> dict[str, float]:
        """McNemar's exact test: each example is simply right or wrong (`mcnemar_p`, `mcnemar_b`, `mcnemar_c`)."""
        from compare.scoring.metrics import load_metric  # evaluate loads TensorFlow: not for `--help`

        mcnemar = load_metric("mcnemar").compute(predictions1=pred_a, predictions2=pred_b, references=gold)
        return {"mcnemar_p": mcnemar["p_value"], "mcnemar_b": mcnemar["b"], "mcnemar_c": mcnemar["c"]}

    def quick_scores(self, decisions: np.ndarray, gold: np.ndarray, num_labels: int) -> dict[str, float]:
        from compare.scoring.metrics import load_metric

        prf = load_metric("precision_recall_f1").compute(
            predictions=decisions, references=gold, labels=list(range(num_labels))
        )
        return {
            "accuracy": load_metric("accuracy").compute(predictions=decisions, references=gold)["accuracy"],
            "macro_f1": prf["macro_f1"],
        }

    def report_scores(
        self, outputs: np.ndarray, decisions: np.ndarray, gold: np.ndarray, labels: list[str], args: Any
    ) -> dict[str, Any]:
        from compare.scoring.scores import single_label_score

        return single_label_score(outputs, gold, labels, args)

    def reference_rows(self, train: tuple, validation: tuple, test: tuple, num_labels: int) -> dict[str, dict]:
        """The majority class, and TF-IDF + logistic regression."""
        from compare.scoring.baselines import majority_class, tfidf_logreg

        return {
            "majority": majority_class(train[2], test[2], num_labels),
            "tfidf_logreg": tfidf_logreg(train, test, num_labels),
        }

    def contested(self, outputs: list[np.ndarray], differ: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The examples decided differently, by the largest probability any model gave its answer."""
        return np.flatnonzero(differ), np.stack([p.max(axis=1) for p in outputs]).max(axis=0)

    def mistakes(self, outputs: np.ndarray, decisions: np.ndarray, gold: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A wrong class, as confident as the probability given to it."""
        return np.flatnonzero(decisions != gold), outputs.max(axis=1)

    def example(self, gold: Any, outputs: dict[str, Any], decisions: dict[str, Any], labels: list[str]) -> dict:
        models = {
            name: {"label": labels[int(p.argmax())], "probability": float(p.max())} for name, p in outputs.items()
        }
        return {"gold": labels[gold], "models": models}

    def confidences(self, outputs: np.ndarray, gold: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The probability of the predicted class, and whether it is the gold one: (n, 1) each."""
        return outputs.max(axis=1)[:, None], (outputs.argmax(axis=1) == gold)[:, None]

    def label_doubts(
        self, gold: np.ndarray, outputs: list[np.ndarray], thresholds: list[float] | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """cleanlab's ensemble label quality over the models and confident learning on their mean probabilities."""
        from compare.scoring.label_issues import single_label_doubts

        return single_label_doubts(gold, outputs)
