"""Multi-label classification: any number of labels per text, a sigmoid per label, decided by per-label thresholds
chosen on validation (`core.multilabel`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from core.kinds.base import EPSILON, Kind, quoted, register
from core.multilabel import choose_thresholds, multilabel_scores
from core.multilabel import predict as multilabel_predict


@register
class MultiLabel(Kind):
    name = "multi_label_classification"
    title = "multi-label classification"
    short = "multi-label"
    headline = "macro_f1"
    second = "micro_f1"
    validation_fields = ("macro_f1", "micro_f1")
    unit = "label"
    gold_title = "Gold labels"
    why_no_class_weight = "multi-label labels overlap"

    def loss(self, label_smoothing: float = 0.0) -> Any:
        import tensorflow as tf

        return tf.keras.losses.BinaryCrossentropy(from_logits=True, label_smoothing=label_smoothing)

    def metrics(self, num_outputs: int) -> list:
        from core.kinds.keras_objects import MacroF1

        return [MacroF1(num_outputs, name="macro_f1")]

    def activate(self, logits: Any) -> Any:
        import tensorflow as tf

        return tf.sigmoid(tf.cast(logits, tf.float32))

    def output_layer(self) -> Any:
        import tensorflow as tf

        return tf.keras.layers.Activation("sigmoid", dtype="float32", name=self.outputs)

    def targets(self, labels_column: list, num_labels: int) -> np.ndarray:
        """Multi-hot rows, float32 (n, L)."""
        return np.asarray(labels_column, dtype=np.float32).reshape(-1, num_labels)

    def check_train(self, targets: np.ndarray, labels: list[str]) -> str | None:
        if len(labels) < 2:
            return (
                f"The data names {len(labels)} label(s) ({', '.join(labels)}); multi-label data needs at least two. "
                "For one yes/no label per text use the default --problem with --label-column."
            )
        if not np.asarray(targets).any():
            return f"No row of the train split has any label ({len(targets)} rows); a model cannot learn them."
        return None

    def decide(self, outputs: np.ndarray, thresholds: list[float] | None = None) -> np.ndarray:
        """0/1 rows (n, L), int64: a label is chosen when its probability reaches its threshold."""
        if thresholds is None:
            raise ValueError("a multi-label model decides by its thresholds; this run records none.")
        return multilabel_predict(outputs, np.asarray(thresholds))

    def monitored_score(self, targets: np.ndarray, outputs: np.ndarray) -> float | None:
        """Macro-F1 at the thresholds chosen on these validation outputs: what the kept run will decide by. At a
        fixed 0.5 a rare label's F1 is 0 until late in training, and early stopping would keep the wrong epoch."""
        outputs = np.asarray(outputs)
        return self.validation_scores(targets, outputs, self.choose_thresholds(outputs, targets))["macro_f1"]

    def choose_thresholds(self, outputs: np.ndarray, targets: np.ndarray) -> list[float] | None:
        return [float(t) for t in choose_thresholds(outputs, targets)]

    def validation_loss(self, targets: np.ndarray, outputs: np.ndarray) -> float:
        probs = np.clip(np.asarray(outputs, np.float64), EPSILON, 1 - EPSILON)
        gold = np.asarray(targets, np.float64)
        return float(-np.mean(gold * np.log(probs) + (1 - gold) * np.log(1 - probs)))

    def validation_scores(
        self, targets: np.ndarray, outputs: np.ndarray, thresholds: list[float] | None = None
    ) -> dict[str, float]:
        found = multilabel_scores(np.asarray(targets, np.int64), self.decide(outputs, thresholds))
        scores = {k: found[k] for k in ("macro_f1", "micro_f1", "subset_accuracy", "hamming_loss")}
        return {"loss": self.validation_loss(targets, outputs), **scores}

    # --- app ---------------------------------------------------------------------------------------------------------

    def answer(self, labels: list[str], decision: Any) -> Any:
        return [labels[k] for k in np.flatnonzero(decision)]

    def panel(self, answer: dict[str, Any], value_range: tuple[float, float] | None = None) -> Any:
        """The chosen labels over a table of each label's probability and threshold, the chosen ones ticked."""
        chosen = answer["label"]
        head = "**Chosen:** " + (", ".join(f"`{label}`" for label in chosen) or "none: no label reaches its threshold")
        rows = [
            f"| {f'✓ **{label}**' if label in chosen else label} | {p:.3f} | {answer['thresholds'][label]:.3f} |"
            for label, p in answer["probs"].items()
        ]
        return "\n".join([head, "", "| label | probability | threshold |", "|---|---:|---:|", *rows])

    def invitation(self, them: str) -> str:
        return (
            f"see which labels each model gives {them}: every label whose probability reaches the threshold its run "
            "chose on validation"
        )

    def answer_space(self, labels: list[str], value_range: tuple[float, float] | None = None) -> str:
        return f"labels: {quoted(labels)}"
