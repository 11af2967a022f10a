"""What training and predicting depend on per kind of problem, defined once for both sides.

The three kinds are transformers' `problem_type` names (`core.tasks`): a model gives `num_outputs` logits per example
(`core.data.TaskData.num_outputs`), and per kind:

| kind                          | loss (from logits)         | outputs            | headline   | decision             |
|-------------------------------|----------------------------|--------------------|------------|----------------------|
| single_label_classification   | sparse categorical CE      | softmax (n, C)     | accuracy   | argmax               |
| multi_label_classification    | binary CE per label        | sigmoid (n, L)     | macro_f1   | per-label thresholds |
| regression                    | mean squared error         | the value (n,)     | spearman   | the value itself     |

Training watches `val_<headline>` (mode max) for every kind: Keras' accuracy metric gives `val_accuracy`, `MacroF1`
(at threshold 0.5) gives `val_macro_f1`, and for regression `core.callbacks.fit_classifier` adds `val_spearman`
from the validation outputs (`dataset_outputs`), a rank statistic no batch-wise metric computes. After training, the kept weights' validation
outputs give run.json's `validation` scores and, for multi-label, `thresholds` (`core.multilabel.choose_thresholds`).

Examples:
    >>> monitor("regression")
    'val_spearman'
    >>> scores = validation_scores("regression", np.array([1.0, 2.0, 3.0]), np.array([1.5, 2.0, 2.5]))
    >>> {k: round(v, 4) for k, v in scores.items()}
    {'loss': 0.1667, 'spearman': 1.0, 'pearson': 1.0, 'mse': 0.1667, 'mae': 0.3333}
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from core.errors import UserError
from core.metrics import classification_scores
from core.multilabel import choose_thresholds, multilabel_scores
from core.multilabel import predict as multilabel_predict
from core.regression import regression_scores
from core.tasks import HEADLINE_METRICS, MULTI_LABEL, PROBLEM_TYPES, REGRESSION, SINGLE_LABEL

EPSILON = 1e-7  # probabilities are clipped to [EPSILON, 1 - EPSILON] in a loss, as Keras does


def check(problem_type: str) -> str:
    """`problem_type` itself, or a ValueError naming the three kinds."""
    if problem_type not in PROBLEM_TYPES:
        raise ValueError(f"problem_type must be one of {', '.join(PROBLEM_TYPES)}, got {problem_type!r}.")
    return problem_type


def monitor(problem_type: str) -> str:
    """The logs key early stopping watches (mode max) and the training curves plot: `val_<headline>`."""
    return f"val_{HEADLINE_METRICS[check(problem_type)]}"


def loss(problem_type: str) -> tf.keras.losses.Loss:
    """The training loss of a model that outputs logits, against the targets of `core.data.TaskData.targets`."""
    if check(problem_type) == SINGLE_LABEL:
        return tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    if problem_type == MULTI_LABEL:
        return tf.keras.losses.BinaryCrossentropy(from_logits=True)
    return tf.keras.losses.MeanSquaredError()


def metrics(problem_type: str, num_outputs: int) -> list[tf.keras.metrics.Metric]:
    """The Keras metrics to compile with: the headline where one accumulates over batches (none for regression,
    whose Spearman needs every validation output at once)."""
    if check(problem_type) == SINGLE_LABEL:
        return [tf.keras.metrics.SparseCategoricalAccuracy(name="accuracy")]
    if problem_type == MULTI_LABEL:
        return [MacroF1(num_outputs, name="macro_f1")]
    return []


def activate(problem_type: str, logits: tf.Tensor) -> tf.Tensor:
    """The model's outputs from its logits (B, K) in float32: softmax (B, C), sigmoid (B, L) or the value (B,)."""
    logits = tf.cast(logits, tf.float32)
    if check(problem_type) == SINGLE_LABEL:
        return tf.nn.softmax(logits, axis=-1)
    if problem_type == MULTI_LABEL:
        return tf.sigmoid(logits)
    return tf.reshape(logits, [-1])  # (B, 1) -> (B,)


class MacroF1(tf.keras.metrics.Metric):
    """Macro-F1 of multi-label logits at probability 0.5 (logit 0), accumulated over batches: the mean over labels of
    2 TP / (predicted + actual), 0 for a label neither present nor predicted (as `core.multilabel.multilabel_scores`).

    Args:
        num_labels: the labels L; `update_state` takes multi-hot targets (B, L) and logits (B, L).
    """

    def __init__(self, num_labels: int, name: str = "macro_f1", **kwargs) -> None:
        super().__init__(name=name, **kwargs)
        self.num_labels = num_labels
        self.counts = self.add_weight("counts", shape=(3, num_labels), initializer="zeros")  # tp, predicted, actual

    def update_state(self, y_true: tf.Tensor, y_pred: tf.Tensor, sample_weight: tf.Tensor | None = None) -> None:
        gold = tf.cast(y_true, tf.float32)  # (B, L)
        pred = tf.cast(y_pred >= 0, tf.float32)  # sigmoid(logit) >= 0.5, (B, L)
        counts = [tf.reduce_sum(gold * pred, 0), tf.reduce_sum(pred, 0), tf.reduce_sum(gold, 0)]  # (L,) each
        self.counts.assign_add(tf.stack(counts))

    def result(self) -> tf.Tensor:
        tp, predicted, actual = tf.unstack(self.counts)
        return tf.reduce_mean(tf.math.divide_no_nan(2 * tp, predicted + actual))

    def reset_state(self) -> None:
        self.counts.assign(tf.zeros_like(self.counts))

    def get_config(self) -> dict:
        return {**super().get_config(), "num_labels": self.num_labels}


def dataset_outputs(model: tf.keras.Model, dataset: tf.data.Dataset, problem_type: str) -> tuple[np.ndarray, ...]:
    """(targets, outputs) of a batched `(features, targets)` dataset, in its order: the outputs `activate` gives from
    the model's logits (a transformers model's `logits`, or the Keras model's output)."""
    outputs = model.predict(dataset.map(lambda features, target: features), verbose=0)
    logits = outputs["logits"] if isinstance(outputs, dict) else outputs
    targets = np.concatenate([np.asarray(target) for _, target in dataset])
    return targets, activate(problem_type, logits).numpy()


def thresholds(problem_type: str, probs: np.ndarray, targets: np.ndarray) -> list[float] | None:
    """The multi-label decision thresholds chosen on validation (`choose_thresholds`), per label; None otherwise."""
    if check(problem_type) != MULTI_LABEL:
        return None
    return [float(t) for t in choose_thresholds(probs, targets)]


def validation_loss(problem_type: str, targets: np.ndarray, outputs: np.ndarray) -> float:
    """The mean loss of the outputs (probabilities, clipped as Keras clips them, or values) against the targets:
    cross-entropy, binary cross-entropy averaged over labels, or squared error."""
    outputs = np.asarray(outputs, np.float64)
    if check(problem_type) == REGRESSION:
        return float(np.mean((outputs - np.asarray(targets, np.float64)) ** 2))
    probs = np.clip(outputs, EPSILON, 1 - EPSILON)
    if problem_type == SINGLE_LABEL:
        return float(-np.mean(np.log(probs[np.arange(len(probs)), np.asarray(targets, np.int64)])))
    gold = np.asarray(targets, np.float64)
    return float(-np.mean(gold * np.log(probs) + (1 - gold) * np.log(1 - probs)))


def validation_scores(
    problem_type: str, targets: np.ndarray, outputs: np.ndarray, run_thresholds: list[float] | None = None
) -> dict[str, float]:
    """run.json's `validation`: the loss, the headline under its own name and the kind's other scores.

    Single label: `accuracy`, `macro_f1`; multi-label (decided by `run_thresholds`): `macro_f1`, `micro_f1`,
    `subset_accuracy`, `hamming_loss`; regression: `spearman`, `pearson`, `mse`, `mae`.
    """
    scores = {"loss": validation_loss(problem_type, targets, outputs)}
    if problem_type == SINGLE_LABEL:
        return {**scores, **classification_scores(targets, outputs.argmax(axis=1), outputs.shape[1])}
    if problem_type == MULTI_LABEL:
        decided = multilabel_predict(outputs, np.asarray(run_thresholds))
        found = multilabel_scores(np.asarray(targets, np.int64), decided)
        return {**scores, **{k: found[k] for k in ("macro_f1", "micro_f1", "subset_accuracy", "hamming_loss")}}
    found = regression_scores(targets, outputs)
    return {**scores, **{k: found[k] for k in ("spearman", "pearson", "mse", "mae")}}


def check_class_weight(class_weight: str, problem_type: str) -> None:
    """Refuses `--class-weight balanced` for a kind without classes to weigh (regression) or whose labels are not
    exclusive (multi-label)."""
    if class_weight == "balanced" and problem_type != SINGLE_LABEL:
        what = "a regression task has no classes" if problem_type == REGRESSION else "multi-label labels overlap"
        raise UserError(
            f"--class-weight balanced weighs single-label classes, but {what} ({problem_type}); "
            "drop --class-weight or pass --class-weight none."
        )
