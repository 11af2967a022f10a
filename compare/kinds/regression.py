"""How `compare` scores and words regression: Spearman's and Pearson's correlations, the values' distances."""

from __future__ import annotations

from typing import Any

import numpy as np

from compare.kinds.base import ComparedKind, register
from core.kinds import Regression
from core.regression import regression_scores


@register(Regression)
class ComparedRegression(ComparedKind):
    table_columns = (("mse", "MSE", "{:.3f}"), ("mae", "MAE", "{:.3f}"))
    table_note = (
        " No calibration: a regression model gives values, not probabilities, so ECE and log loss do not apply."
    )
    figures = ("predicted_vs_gold",)
    metric_module = "regression"

    def describe_labels(self, labels: list[str]) -> str:
        return self.kind.title

    def point_scores(self, gold: np.ndarray, pred: np.ndarray, num_labels: int) -> dict[str, float]:
        found = regression_scores(gold, pred)
        return {metric: found[metric] for metric in self.kind.scores}

    def report_scores(
        self, outputs: np.ndarray, decisions: np.ndarray, gold: np.ndarray, labels: list[str], args: Any
    ) -> dict[str, Any]:
        from compare.scoring.scores import regression_score

        return regression_score(decisions, gold, args, self.kind)

    def reference_rows(self, train: tuple, validation: tuple, test: tuple, num_labels: int) -> dict[str, dict]:
        """The train mean, TF-IDF + ridge, and for a pair task the cosine of the two texts' TF-IDF vectors."""
        from compare.scoring.baselines import tfidf_cosine, tfidf_ridge, train_mean

        rows = {"train_mean": train_mean(train[2], test[2]), "tfidf_ridge": tfidf_ridge(train, test)}
        if test[1] is not None:
            rows["tfidf_cosine"] = tfidf_cosine(train, test)
        return rows

    def contested(self, outputs: list[np.ndarray], differ: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every example (values always differ), by how far apart the models' values are."""
        values = np.stack(outputs)  # (M, n)
        return np.arange(values.shape[1]), values.max(axis=0) - values.min(axis=0)

    def mistakes(self, outputs: np.ndarray, decisions: np.ndarray, gold: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every example, as large as its error."""
        return np.arange(len(gold)), np.abs(outputs - gold)

    def example(self, gold: Any, outputs: dict[str, Any], decisions: dict[str, Any], labels: list[str]) -> dict:
        return {"gold": float(gold), "models": {name: {"value": float(v)} for name, v in outputs.items()}}

    def prediction(self, labels: list[str], output: Any, decision: Any) -> dict:
        """`{"value"}`: the value is the answer."""
        return {"value": self.kind.answer(labels, output)}
