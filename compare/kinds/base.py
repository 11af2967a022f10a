"""`ComparedKind`: how `compare` scores, tables and words one kind of task, and the registry of those views.

The scores through the suite's evaluate modules and the reference rows import compare's scoring modules when called,
so reading a view never loads them (nor TensorFlow, which `evaluate` loads).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from core.kinds.views import KindView, Views


class ComparedKind(KindView):
    """`compare`'s view of one kind. Subclasses set the class attributes and override what differs.

    Attributes:
        table_columns: the report table's other scores, beside the two scores: (key, header, format: a `str.format`
            pattern, or `pct`).
        table_note: what the report's quality table adds for this kind.
        figures: the report's figures for this kind (`compare.render.figures.FIGURES`).
        decides_by_thresholds: whether its decision takes per-label thresholds (run.json `thresholds`), which the
            report shows.
        per_class_note: what the report's per-class (per-label) table adds.
        disagreement_order: how the report orders the examples the models disagree on.
        metric_module: the suite's evaluate module (`compare/scoring/metrics/`) that gives the two scores at once.
    """

    table_columns: ClassVar[tuple[tuple[str, str, str], ...]] = ()
    table_note: ClassVar[str] = ""
    figures: ClassVar[tuple[str, ...]] = ()
    decides_by_thresholds: ClassVar[bool] = False
    per_class_note: ClassVar[str] = ""
    disagreement_order: ClassVar[str] = ""
    metric_module: ClassVar[str] = ""

    def describe_labels(self, labels: list[str]) -> str:
        """The kind with its labels, for a report's task line: "single-label classification (2 classes)"."""
        unit = self.kind.unit
        return f"{self.kind.title} ({len(labels)} {unit}{'es' if unit == 'class' else 's'})"

    # --- scores -----------------------------------------------------------------------------------------------------

    def point_scores(self, gold: np.ndarray, pred: np.ndarray, num_labels: int) -> dict[str, float]:
        """The two `scores` of one set of decisions against gold (numpy only: the bootstrap calls it per resample)."""
        raise NotImplementedError

    def resampled_scores(
        self, gold: np.ndarray, pred: np.ndarray, idx: np.ndarray, num_labels: int
    ) -> dict[str, np.ndarray]:
        """The two `scores` on each row of resampled example indices `idx` (R, n): {score: (R,)}."""
        rows = [self.point_scores(gold[i], pred[i], num_labels) for i in idx]
        return {metric: np.array([row[metric] for row in rows]) for metric in self.kind.scores}

    def paired_test(
        self, gold: np.ndarray, pred_a: np.ndarray, pred_b: np.ndarray, headline_diffs: np.ndarray
    ) -> dict[str, float]:
        """The significance test of two models' decisions on the same examples: here the paired bootstrap p-value of
        the headline's resampled differences (`bootstrap_p`)."""
        from compare.scoring.statistics import paired_p_value

        return {"bootstrap_p": paired_p_value(headline_diffs)}

    def quick_scores(self, decisions: np.ndarray, gold: np.ndarray, num_labels: int) -> dict[str, float]:
        """The two `scores` through the suite's evaluate modules (per seed, per curve point, per reference row): here
        through `metric_module`."""
        from compare.scoring.metrics import load_metric  # evaluate loads TensorFlow: not for `--help`

        found = load_metric(self.metric_module).compute(predictions=decisions.tolist(), references=gold.tolist())
        return {metric: found[metric] for metric in self.kind.scores}

    def report_scores(
        self, outputs: np.ndarray, decisions: np.ndarray, gold: np.ndarray, labels: list[str], args: Any
    ) -> dict[str, Any]:
        """A model's quality entries of results.json (`compare.scoring.scores`), with bootstrap intervals of the
        two scores (`args`: `compare.scoring.statistics.StatisticsArguments`)."""
        raise NotImplementedError

    def reference_rows(self, train: tuple, validation: tuple, test: tuple, num_labels: int) -> dict[str, dict]:
        """The report's reference rows (`compare.scoring.baselines`), trained on `train` and scored on `test`, each
        split `(texts, second texts or None, gold)`, by name."""
        raise NotImplementedError

    # --- examples -----------------------------------------------------------------------------------------------------

    def contested(self, outputs: list[np.ndarray], differ: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where models' answers differ: (example indices, how strongly each example (n,) is contested), from every
        model's outputs and whether any decision differs (n,)."""
        raise NotImplementedError

    def mistakes(self, outputs: np.ndarray, decisions: np.ndarray, gold: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One model's wrong answers: (example indices, how confident (or large) each example's answer is (n,))."""
        raise NotImplementedError

    def example(self, gold: Any, outputs: dict[str, Any], decisions: dict[str, Any], labels: list[str]) -> dict:
        """An error-analysis row's `gold` and per model answer (`models`) for one example."""
        raise NotImplementedError

    def prediction(self, labels: list[str], output: Any, decision: Any) -> dict:
        """One model's entry in a predictions.jsonl row: `{"label", "probs": {label: probability}}`."""
        return {
            "label": self.kind.answer(labels, decision),
            "probs": {label: round(float(v), 6) for label, v in zip(labels, output)},
        }

    # --- calibration and label doubts (compare.scoring.calibration, compare.scoring.label_issues) ----------------------

    def confidences(self, outputs: np.ndarray, gold: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """How sure each decision the calibration error counts is, and whether it was right: two arrays (n, m), one
        column per decision an example holds (`compare.scoring.calibration`)."""
        raise NotImplementedError

    def label_doubts(
        self, gold: np.ndarray, outputs: list[np.ndarray], thresholds: list[float] | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """cleanlab's audit of a split's gold labels under several models' out-of-sample probabilities: (label
        quality (n,), lower more doubted; whether each is flagged as a likely error (n,); the suggested answer).
        Only kinds with labels (`has_labels`) are audited."""
        raise NotImplementedError


VIEWS: Views[ComparedKind] = Views("compare's scoring", "compare.kinds")
register = VIEWS.register
reported = VIEWS.of
