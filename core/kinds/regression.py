"""Regression: one number per text, the value itself is the answer, ranked by Spearman's rho."""

from __future__ import annotations

from typing import Any

import numpy as np

from core.kinds.base import Kind, number, register
from core.regression import regression_scores


@register
class Regression(Kind):
    name = "regression"
    title = "regression"
    short = "regression"
    headline = "spearman"
    second = "pearson"
    validation_fields = ("spearman", "pearson", "mse")
    outputs = "values"
    unit = None
    gold_title = "Gold value"
    why_no_class_weight = "a regression task has no classes"

    def num_outputs(self, num_labels: int) -> int:
        return 1

    def describe_labels(self, labels: list[str]) -> str:
        return self.title

    def loss(self, label_smoothing: float = 0.0) -> Any:
        import tensorflow as tf

        return tf.keras.losses.MeanSquaredError()

    def activate(self, logits: Any) -> Any:
        import tensorflow as tf

        return tf.reshape(tf.cast(logits, tf.float32), [-1])  # (B, 1) -> (B,)

    def output_layer(self) -> Any:
        import tensorflow as tf

        return tf.keras.layers.Reshape((), dtype="float32", name=self.outputs)  # (B, 1) -> (B,)

    def targets(self, labels_column: list, num_labels: int) -> np.ndarray:
        """The values, float32 (n,)."""
        return np.asarray(labels_column, dtype=np.float32)

    def check_train(self, targets: np.ndarray, labels: list[str]) -> str | None:
        targets = np.asarray(targets)
        if len(targets) and targets.min() == targets.max():
            return (
                f"Every label of the train split is {float(targets[0]):g} ({len(targets)} rows); a regression model "
                "needs values that vary."
            )
        return None

    def data_record(self, train_targets: np.ndarray) -> dict[str, Any]:
        """`value_range`: the train split's smallest and largest value, the scale the app shows a value on."""
        return {"value_range": [float(np.min(train_targets)), float(np.max(train_targets))]}

    def decide(self, outputs: np.ndarray, thresholds: list[float] | None = None) -> np.ndarray:
        return np.asarray(outputs)

    def monitored_score(self, targets: np.ndarray, outputs: np.ndarray) -> float | None:
        """Spearman's rho of every validation value at once: a rank statistic no batch-wise metric computes."""
        return regression_scores(targets, outputs)["spearman"]

    def validation_loss(self, targets: np.ndarray, outputs: np.ndarray) -> float:
        return float(np.mean((np.asarray(outputs, np.float64) - np.asarray(targets, np.float64)) ** 2))

    def validation_scores(
        self, targets: np.ndarray, outputs: np.ndarray, thresholds: list[float] | None = None
    ) -> dict[str, float]:
        found = regression_scores(targets, outputs)
        return {
            "loss": self.validation_loss(targets, outputs),
            **{k: found[k] for k in ("spearman", "pearson", "mse", "mae")},
        }

    def empty_outputs(self, num_labels: int) -> np.ndarray:
        return np.zeros((0,), np.float32)

    # --- comparison ---------------------------------------------------------------------------------------------------

    table_columns = (("mse", "MSE", "{:.3f}"), ("mae", "MAE", "{:.3f}"))
    table_note = (
        " No calibration: a regression model gives values, not probabilities, so ECE and log loss do not apply."
    )
    figures = ("predicted_vs_gold",)

    def point_scores(self, gold: np.ndarray, pred: np.ndarray, num_labels: int) -> dict[str, float]:
        found = regression_scores(gold, pred)
        return {metric: found[metric] for metric in self.scores}

    def quick_scores(self, decisions: np.ndarray, gold: np.ndarray, num_labels: int) -> dict[str, float]:
        from compare.scoring.metrics import load_metric

        found = load_metric("regression").compute(predictions=decisions.tolist(), references=gold.tolist())
        return {"spearman": found["spearman"], "pearson": found["pearson"]}

    def report_scores(
        self, outputs: np.ndarray, decisions: np.ndarray, gold: np.ndarray, labels: list[str], args: Any
    ) -> dict[str, Any]:
        from compare.scoring.scores import regression_score

        return regression_score(decisions, gold, args, self)

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

    # --- app ---------------------------------------------------------------------------------------------------------

    def answer(self, labels: list[str], decision: Any) -> Any:
        return round(float(decision), 6)

    def prediction(self, labels: list[str], output: Any, decision: Any) -> dict:
        """`{"value"}`: the value is the answer."""
        return {"value": self.answer(labels, output)}

    def panel(self, answer: dict[str, Any], value_range: tuple[float, float] | None = None) -> Any:
        """The value, and the train split's range when recorded."""
        scale = ""
        if value_range is not None:
            low, high = map(number, value_range)
            scale = f"\n\nThe train split's values run from {low} to {high}."
        return f"### {number(answer['value'])}{scale}"

    def invitation(self, them: str) -> str:
        return f"see the value each model gives {them}"

    def answer_space(self, labels: list[str], value_range: tuple[float, float] | None = None) -> str:
        scale = "" if value_range is None else " from {} to {} in train".format(*map(number, value_range))
        return f"a value{scale}"

    # --- training ---------------------------------------------------------------------------------------------------

    def label_feature(self, labels: list[str]) -> Any:
        import datasets

        return datasets.Value("float32")

    def map_labels(self, raw: dict, labels: list[str] | None, separator: str) -> tuple[dict[str, list], list[str]]:
        from core.labels import numbers

        return numbers(raw), []

    # --- distillation (scratch.distill) -----------------------------------------------------------------------------

    soft_targets_name = "values"

    def soft_targets(self, outputs: np.ndarray) -> np.ndarray:
        """The teacher's values, (n, 1)."""
        return np.asarray(outputs, np.float32).reshape(-1, 1)

    def teacher_loss(self, teacher: Any, logits: Any, temperature: float) -> Any:
        """The squared distance to the teacher's value (no temperature: values are not softened)."""
        import tensorflow as tf

        return tf.reduce_mean(tf.square(logits - teacher), axis=-1)  # (B,)

    # --- model card (core.card) -------------------------------------------------------------------------------------

    card_noun = "text regression model"
    card_purpose = "to predict a value"

    def card_data(self, labels: list[str]) -> str:
        return "Values (regression)"

    def card_example(self, inputs: str, labels: list[str]) -> str:
        return f"predict_values({inputs})  # (1,)"

    # --- attribution (core.attribution) -----------------------------------------------------------------------------

    explained_scale = "value"

    def explained_outputs(self, logits: Any) -> Any:
        """The value (B,)."""
        return self.activate(logits)

    def attribution_targets(self, outputs: np.ndarray, thresholds: list[float] | None = None) -> list[int | None]:
        """The value (None: the model's one output)."""
        return [None]

    def target_index(self, target: Any, labels: list[str]) -> int | None:
        if target not in (None, "value"):
            raise ValueError(f"a regression model's attribution explains its value; pass no target, got {target!r}.")
        return None
