"""How `compare` scores and words multi-label classification: macro- and micro-F1 at each label's threshold."""

from __future__ import annotations

from typing import Any

import numpy as np

from compare.kinds.base import ComparedKind, register
from core.kinds import MultiLabel
from core.multilabel import multilabel_scores


@register(MultiLabel)
class ComparedMultiLabel(ComparedKind):
    table_columns = (
        ("subset_accuracy", "subset accuracy %", "pct"),
        ("hamming_loss", "Hamming loss %", "pct"),
        ("ece", "ECE (mean per label)", "{:.3f}"),
        ("log_loss", "log loss", "{:.3f}"),
    )
    table_note = (
        " Each model predicts a label when its probability reaches the label's threshold, chosen on validation "
        "(per label, in the table Per label); ECE is the mean over labels of each label's calibration error."
    )
    figures = ("label_reliability", "per_label_f1")
    decides_by_thresholds = True
    per_class_note = (
        "Each label is a yes/no decision: its probability against the model's threshold for it, chosen on "
        "validation to maximise the label's F1 (0.5 for a label absent from validation)."
    )
    disagreement_order = (
        "the widest gap between two models' probabilities of one label first (the labels each model chose)"
    )
    metric_module = "multilabel"

    def point_scores(self, gold: np.ndarray, pred: np.ndarray, num_labels: int) -> dict[str, float]:
        found = multilabel_scores(gold, pred)
        return {metric: found[metric] for metric in self.kind.scores}

    def report_scores(
        self, outputs: np.ndarray, decisions: np.ndarray, gold: np.ndarray, labels: list[str], args: Any
    ) -> dict[str, Any]:
        from compare.scoring.scores import multilabel_score

        return multilabel_score(outputs, decisions, gold, labels, args, self.kind)

    def reference_rows(self, train: tuple, validation: tuple, test: tuple, num_labels: int) -> dict[str, dict]:
        """No label at all, and TF-IDF + one logistic regression per label (thresholds chosen on validation)."""
        from compare.scoring.baselines import no_labels, tfidf_one_vs_rest

        return {"no_labels": no_labels(test[2]), "tfidf_one_vs_rest": tfidf_one_vs_rest(train, validation, test)}

    def contested(self, outputs: list[np.ndarray], differ: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The examples whose label sets differ, by the widest gap between two models' probabilities of a label."""
        probs = np.stack(outputs)  # (M, n, L)
        return np.flatnonzero(differ), (probs.max(axis=0) - probs.min(axis=0)).max(axis=1)

    def mistakes(self, outputs: np.ndarray, decisions: np.ndarray, gold: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A wrong set, as confident as the probability behind its most confidently wrong label (p for a label
        wrongly present, 1 - p for one wrongly absent)."""
        errors = decisions != gold  # (n, L)
        sureness = np.where(decisions == 1, outputs, 1 - outputs)
        return np.flatnonzero(errors.any(axis=1)), np.where(errors, sureness, 0).max(axis=1)

    def example(self, gold: Any, outputs: dict[str, Any], decisions: dict[str, Any], labels: list[str]) -> dict:
        answer = self.kind.answer
        models = {name: {"label": answer(labels, d), "right": bool((d == gold).all())} for name, d in decisions.items()}
        return {"gold": answer(labels, gold), "models": models}

    def confidences(self, outputs: np.ndarray, gold: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each label as a yes/no decision: the probability of its more likely answer, and whether that answer is the
        gold one (n, L) each (`compare.scoring.calibration.label_calibration`)."""
        outputs = np.asarray(outputs, np.float64)
        return np.maximum(outputs, 1 - outputs), (outputs > 0.5) == (np.asarray(gold) > 0)

    def label_doubts(
        self, gold: np.ndarray, outputs: list[np.ndarray], thresholds: list[float] | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """cleanlab's multi-label quality and issues on the models' mean probabilities, suggested at `thresholds`."""
        from compare.scoring.label_issues import multilabel_doubts

        return multilabel_doubts(gold, outputs, thresholds)
