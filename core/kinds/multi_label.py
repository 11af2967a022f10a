"""Multi-label classification: any number of labels per text, a sigmoid per label, decided by per-label thresholds
chosen on validation (`core.multilabel`)."""

from __future__ import annotations

from pathlib import Path
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

    # --- comparison ---------------------------------------------------------------------------------------------------

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

    def point_scores(self, gold: np.ndarray, pred: np.ndarray, num_labels: int) -> dict[str, float]:
        found = multilabel_scores(gold, pred)
        return {metric: found[metric] for metric in self.scores}

    def quick_scores(self, decisions: np.ndarray, gold: np.ndarray, num_labels: int) -> dict[str, float]:
        from compare.scoring.metrics import load_metric

        found = load_metric("multilabel").compute(predictions=decisions.tolist(), references=gold.tolist())
        return {"macro_f1": found["macro_f1"], "micro_f1": found["micro_f1"]}

    def report_scores(
        self, outputs: np.ndarray, decisions: np.ndarray, gold: np.ndarray, labels: list[str], args: Any
    ) -> dict[str, Any]:
        from compare.scoring.scores import multilabel_score

        return multilabel_score(outputs, decisions, gold, labels, args, self)

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
        models = {
            name: {"label": self.answer(labels, d), "right": bool((d == gold).all())} for name, d in decisions.items()
        }
        return {"gold": self.answer(labels, gold), "models": models}

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

    # --- training ---------------------------------------------------------------------------------------------------

    reads_label_columns = True

    def label_feature(self, labels: list[str]) -> Any:
        import datasets

        return datasets.List(datasets.Value("float32"), length=len(labels))

    def map_labels(self, raw: dict, labels: list[str] | None, separator: str) -> tuple[dict[str, list], list[str]]:
        from core.labels import multi_hot

        return multi_hot(raw, labels, separator)

    # --- distillation (scratch.distill) -----------------------------------------------------------------------------

    soft_targets_name = "log_odds"

    def soft_targets(self, outputs: np.ndarray) -> np.ndarray:
        """The log-odds of the label probabilities (the teacher network's logits); float64 on the way, so that a
        probability within float32's rounding of 1 keeps its odds."""
        tiny = np.finfo(np.float32).tiny
        outputs = np.asarray(outputs, np.float64)
        return (np.log(np.maximum(outputs, tiny)) - np.log(np.maximum(1.0 - outputs, tiny))).astype(np.float32)

    def teacher_loss(self, teacher: Any, logits: Any, temperature: float) -> Any:
        """T^2 KL(sigmoid(teacher / T) || sigmoid(logits / T)) per label, averaged over the labels."""
        import tensorflow as tf

        t = temperature
        # each label's Bernoulli: log p = log sigmoid(z), log (1 - p) = log sigmoid(-z)
        teacher_p = tf.sigmoid(teacher / t)  # (B, L)
        kl = teacher_p * (tf.math.log_sigmoid(teacher / t) - tf.math.log_sigmoid(logits / t)) + (1 - teacher_p) * (
            tf.math.log_sigmoid(-teacher / t) - tf.math.log_sigmoid(-logits / t)
        )  # (B, L)
        return t**2 * tf.reduce_mean(kl, axis=-1)  # (B,)

    # --- model card (core.card) -------------------------------------------------------------------------------------

    card_noun = "multi-label text classifier"
    card_purpose = "to choose any of {n} labels"

    def card_data(self, labels: list[str]) -> str:
        return "Labels (several per text): " + ", ".join(f"`{label}`" for label in labels)

    def card_scores(self, validation: dict[str, float], labels: list[str], thresholds: list[float] | None) -> str:
        chosen = ", ".join(f"`{label}` {t:.4f}" for label, t in zip(labels, thresholds, strict=True))
        scores = ", ".join(f"{name} {value:.4f}" for name, value in validation.items())
        return f"{scores} (each label chosen at its threshold, chosen on validation: {chosen})"

    def card_example(self, inputs: str, labels: list[str]) -> str:
        return f"predict_proba({inputs})  # (1, {len(labels)}), each label's probability"

    # --- rare labels (the fine-tuned side's --focal-gamma) ----------------------------------------------------------

    def focal_loss(self, gamma: float) -> Any:
        """Keras' binary focal cross-entropy on the logits, each label's term scaled by (1 - p_t)^gamma."""
        import tensorflow as tf

        return tf.keras.losses.BinaryFocalCrossentropy(gamma=gamma, from_logits=True)

    # --- calibration (core.calibration) -------------------------------------------------------------------------------

    def fit_calibration(self, outputs: np.ndarray, targets: np.ndarray) -> dict[str, Any] | None:
        """One temperature per label, each fitted on that label's validation log loss."""
        from core.calibration import fit_sigmoid

        return fit_sigmoid(outputs, targets)

    def calibrate(self, outputs: np.ndarray, temperatures: list[float] | None) -> np.ndarray:
        from core.calibration import sigmoid_calibrated

        return outputs if temperatures is None else sigmoid_calibrated(outputs, temperatures)

    def calibrate_tensor(self, outputs: Any, temperatures: list[float] | None) -> Any:
        from core.calibration import sigmoid_calibrated_tensor

        return outputs if temperatures is None else sigmoid_calibrated_tensor(outputs, temperatures)

    def calibrate_onnx(self, path: Path, temperatures: list[float] | None) -> None:
        from core.calibration import append_to_onnx

        if temperatures is not None:
            append_to_onnx(path, "Sigmoid", temperatures)

    def confidences(self, outputs: np.ndarray, gold: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each label as a yes/no decision: the probability of its more likely answer, and whether that answer is the
        gold one (n, L) each (`compare.scoring.calibration.label_calibration`)."""
        outputs = np.asarray(outputs, np.float64)
        return np.maximum(outputs, 1 - outputs), (outputs > 0.5) == (np.asarray(gold) > 0)

    # --- label doubts (compare.scoring.label_issues) ------------------------------------------------------------------

    def label_doubts(
        self, gold: np.ndarray, outputs: list[np.ndarray], thresholds: list[float] | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """cleanlab's multi-label quality and issues on the models' mean probabilities, suggested at `thresholds`."""
        from compare.scoring.label_issues import multilabel_doubts

        return multilabel_doubts(gold, outputs, thresholds)

    # --- attribution (core.attribution) -----------------------------------------------------------------------------

    def explained_outputs(self, logits: Any) -> Any:
        """Each label's log-odds, its logit (B, L)."""
        import tensorflow as tf

        return tf.cast(logits, tf.float32)

    def attribution_targets(self, outputs: np.ndarray, thresholds: list[float] | None = None) -> list[int | None]:
        """Each label chosen at its threshold (0.5 without), most probable first; the most probable when none is."""
        cut = np.full(len(outputs), 0.5) if thresholds is None else np.asarray(thresholds)
        chosen = [int(i) for i in np.argsort(-outputs, kind="stable") if outputs[i] >= cut[i]]
        return chosen or [int(np.argmax(outputs))]

    def confidence(self, answer: dict[str, Any]) -> float | None:
        """The least sure of its label decisions: the smallest of max(p, 1 - p) over the labels."""
        return min((max(p, 1 - p) for p in answer["probs"].values()), default=None)
