"""Single-label classification: one class per text, softmax outputs, decided by argmax."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from core.kinds.base import EPSILON, Kind, quoted, register
from core.metrics import accuracy_and_macro_f1, classification_scores, confusion_counts


@register
class SingleLabel(Kind):
    name = "single_label_classification"
    title = "single-label classification"
    short = "classification"
    headline = "accuracy"
    second = "macro_f1"
    validation_fields = ("accuracy", "macro_f1")

    def check_class_weight(self, class_weight: str) -> None:
        """Every class weight is allowed: the classes are exclusive."""

    def loss(self, label_smoothing: float = 0.0) -> Any:
        import tensorflow as tf

        if label_smoothing:
            from core.kinds.keras_objects import SparseCrossentropy

            return SparseCrossentropy(label_smoothing)
        return tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def metrics(self, num_outputs: int) -> list:
        import tensorflow as tf

        return [tf.keras.metrics.SparseCategoricalAccuracy(name="accuracy")]

    def activate(self, logits: Any) -> Any:
        import tensorflow as tf

        return tf.nn.softmax(tf.cast(logits, tf.float32), axis=-1)

    def output_layer(self) -> Any:
        import tensorflow as tf

        return tf.keras.layers.Softmax(dtype="float32", name=self.outputs)

    def targets(self, labels_column: list, num_labels: int) -> np.ndarray:
        """Class ids, int64 (n,)."""
        return np.asarray(labels_column, dtype=np.int64)

    def check_train(self, targets: np.ndarray, labels: list[str]) -> str | None:
        present = set(np.asarray(targets).tolist())
        if len(present) < 2:
            only = labels[present.pop()] if present else "none"
            return (
                f"The train split holds one class only ({only!r}) in {len(targets)} rows; "
                "a classifier needs examples of at least two classes."
            )
        return None

    def stratify(self) -> bool:
        return True

    def decide(self, outputs: np.ndarray, thresholds: list[float] | None = None) -> np.ndarray:
        return np.asarray(outputs).argmax(axis=1)

    def validation_loss(self, targets: np.ndarray, outputs: np.ndarray) -> float:
        probs = np.clip(np.asarray(outputs, np.float64), EPSILON, 1 - EPSILON)
        return float(-np.mean(np.log(probs[np.arange(len(probs)), np.asarray(targets, np.int64)])))

    def validation_scores(
        self, targets: np.ndarray, outputs: np.ndarray, thresholds: list[float] | None = None
    ) -> dict[str, float]:
        outputs = np.asarray(outputs)
        scores = classification_scores(targets, self.decide(outputs), outputs.shape[1])
        return {"loss": self.validation_loss(targets, outputs), **scores}

    # --- comparison ---------------------------------------------------------------------------------------------------

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

    # --- app ---------------------------------------------------------------------------------------------------------

    label_panel = True

    def app_answers(
        self, outputs: np.ndarray, labels: list[str], thresholds: list[float] | None = None
    ) -> list[dict[str, Any]]:
        """`{label: probability}`: the classes' probabilities (summing to 1), in label order."""
        return [{label: float(p) for label, p in zip(labels, row)} for row in outputs]

    def decision(self, answer: dict[str, Any]) -> Any:
        """The most probable class."""
        return max(answer, key=answer.get)

    def answer(self, labels: list[str], decision: Any) -> Any:
        return labels[int(decision)]

    def panel(self, answer: dict[str, Any], value_range: tuple[float, float] | None = None) -> Any:
        return answer

    def invitation(self, them: str) -> str:
        return f"see how each model classifies {them}"

    def answer_space(self, labels: list[str], value_range: tuple[float, float] | None = None) -> str:
        return f"classes: {quoted(labels)}"

    # --- training ---------------------------------------------------------------------------------------------------

    smooths_labels = True

    def label_feature(self, labels: list[str]) -> Any:
        import datasets

        return datasets.ClassLabel(names=labels)

    def map_labels(self, raw: dict, labels: list[str] | None, separator: str) -> tuple[dict[str, list], list[str]]:
        from core.labels import class_ids

        return class_ids(raw, labels, separator)

    # --- distillation (scratch.distill) -----------------------------------------------------------------------------

    def soft_targets(self, outputs: np.ndarray) -> np.ndarray:
        """The log of the class probabilities, which differ from the teacher network's logits by a constant per row
        and so give the same tempered softmax."""
        return np.log(np.maximum(outputs, np.finfo(np.float32).tiny))

    def teacher_loss(self, teacher: Any, logits: Any, temperature: float) -> Any:
        """T^2 KL(softmax(teacher / T) || softmax(logits / T))."""
        import tensorflow as tf

        t = temperature
        teacher_log_p = tf.nn.log_softmax(teacher / t, axis=-1)  # (B, K)
        student_log_p = tf.nn.log_softmax(logits / t, axis=-1)  # (B, K)
        return t**2 * tf.reduce_sum(tf.exp(teacher_log_p) * (teacher_log_p - student_log_p), axis=-1)  # (B,)

    # --- predicting (core.classifier) -------------------------------------------------------------------------------

    def tidy_outputs(self, outputs: np.ndarray) -> np.ndarray:
        """Rows renormalised to sum to 1 (a float32 softmax, or another runtime's, may miss by a rounding error)."""
        return outputs / outputs.sum(axis=1, keepdims=True)

    # --- model card (core.card) -------------------------------------------------------------------------------------

    def card_scores(self, validation: dict[str, float], labels: list[str], thresholds: list[float] | None) -> str:
        return f"Accuracy {validation['accuracy']:.4f}, macro-F1 {validation['macro_f1']:.4f}"

    # --- calibration (core.calibration) -------------------------------------------------------------------------------

    def fit_calibration(self, outputs: np.ndarray, targets: np.ndarray) -> dict[str, Any] | None:
        """One temperature for the softmax."""
        from core.calibration import fit_softmax

        return fit_softmax(outputs, targets)

    def calibrate(self, outputs: np.ndarray, temperatures: list[float] | None) -> np.ndarray:
        from core.calibration import softmax_calibrated

        return outputs if temperatures is None else softmax_calibrated(outputs, temperatures)

    def calibrate_tensor(self, outputs: Any, temperatures: list[float] | None) -> Any:
        from core.calibration import softmax_calibrated_tensor

        return outputs if temperatures is None else softmax_calibrated_tensor(outputs, temperatures)

    def calibrate_onnx(self, path: Path, temperatures: list[float] | None) -> None:
        from core.calibration import append_to_onnx

        if temperatures is not None:
            append_to_onnx(path, "Softmax", temperatures)

    def confidences(self, outputs: np.ndarray, gold: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The probability of the predicted class, and whether it is the gold one: (n, 1) each."""
        return outputs.max(axis=1)[:, None], (outputs.argmax(axis=1) == gold)[:, None]

    # --- label doubts (compare.scoring.label_issues) ------------------------------------------------------------------

    def label_doubts(
        self, gold: np.ndarray, outputs: list[np.ndarray], thresholds: list[float] | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """cleanlab's ensemble label quality over the models and confident learning on their mean probabilities."""
        from compare.scoring.label_issues import single_label_doubts

        return single_label_doubts(gold, outputs)

    # --- attribution (core.attribution) and abstention (the app) -------------------------------------------------

    def confidence(self, answer: dict[str, Any]) -> float | None:
        """The chosen class's probability."""
        return max(answer.values())
