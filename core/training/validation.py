"""A classifier's validation during training, from its outputs: one pass over the validation split per validation
gives the epoch's `val_*` logs and keeps the outputs of the weights the run ends with, from which the final figures
(calibration, thresholds, run.json `validation`) come without another pass.

    >>> validating = ValidationOutputs(validation, kind, row_order(indexed))   # doctest: +SKIP
    >>> training = fit(model, train, validation, run_dir, config, callbacks=[validating])   # doctest: +SKIP
    >>> final = final_validation(kind, gold, validating.kept, lambda: one_pass(model))   # doctest: +SKIP
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import tensorflow as tf

from core.kinds import Kind

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Validated:
    """One validation of a model's weights.

    Attributes:
        outputs: the model's outputs (`Kind.activate`, uncalibrated) for every validation row, in the split's order.
        logs: the scores as the epoch's logs hold them: `val_loss` (the compiled loss, as Keras' own evaluation
            counts it) and each compiled metric's and the kind's headline `val_<score>` (`Kind.validation_scores` at
            the thresholds `Kind.choose_thresholds` picks on these outputs).
        weights: which weights these are, for the log: `step N` (the optimizer steps they were validated after) or
            the averaged epochs.
    """

    outputs: np.ndarray
    logs: dict[str, float]
    weights: str


class ValidationOutputs(tf.keras.callbacks.Callback):
    """Validates a classifier after every epoch in one pass over the validation split (`model.predict`), in place of
    Keras' own evaluation: the epoch's `val_*` logs are derived from the outputs (`Validated.logs`), and the outputs
    of the epoch early stopping may keep are held until training ends.

    `core.training.fit` runs it first, so early stopping and the training log read the scores it puts into the logs,
    and `attach`es it to the rest of the callbacks. After `fit`, `kept` is the validation of the weights the model
    ends with (the best epoch's, or the kept average's), or None when this session did not validate them (a resumed
    run whose best epoch came before the interruption).

    Args:
        validation: batched `(features, targets)`, in any row order (length-sorted, bucketed).
        kind: the classifier's kind of task.
        order: the split's row of each example as `validation` yields them (`row_order`); None: the split's order.
    """

    def __init__(self, validation: tf.data.Dataset, kind: Kind, order: np.ndarray | None = None) -> None:
        super().__init__()
        self.validation, self.kind, self.order = validation, kind, order
        self.listeners: Sequence[tf.keras.callbacks.Callback] = ()
        self.stopping: tf.keras.callbacks.EarlyStopping | None = None
        self.kept: Validated | None = None
        self._targets: np.ndarray | None = None
        self._by_epoch: dict[int, Validated] = {}
        self._latest: Validated | None = None

    @property
    def targets(self) -> np.ndarray:
        """The validation targets in the dataset's order (read once from the input pipeline, without the model)."""
        if self._targets is None:
            self._targets = np.concatenate([np.asarray(target) for _, target in self.validation])
        return self._targets

    def validate(self, weights: str | None = None) -> Validated:
        """One pass over the validation split with the model's current weights (`weights` names them; by default
        the optimizer's step count)."""
        predicted = self.model.predict(self.validation.map(lambda features, target: features), verbose=0)
        logits = predicted["logits"] if isinstance(predicted, dict) else predicted  # transformers' or Keras' own
        targets, outputs = self.targets, self.kind.activate(logits).numpy()
        scores = self.kind.validation_scores(targets, outputs, self.kind.choose_thresholds(outputs, targets))
        compiled = [metric.name for metric in self.model.metrics if metric.name in scores and metric.name != "loss"]
        logs = {
            "val_loss": self.compiled_loss(targets, logits),
            **{f"val_{name}": float(scores[name]) for name in [*compiled, self.kind.headline]},
        }
        if self.order is not None:
            outputs = restored(outputs, self.order)
        steps = int(self.model.optimizer.iterations.numpy())
        self._latest = Validated(outputs, logs, weights or f"step {steps}")
        return self._latest

    def compiled_loss(self, targets: np.ndarray, logits: Any) -> float:
        """The mean compiled loss of the logits, as Keras' evaluation counts it: the loss the model was compiled with
        (label smoothing, focal or distillation loss included; no class weights), plus any regularization losses."""
        loss = tf.keras.losses.get(self.model.loss)(targets, logits)
        if self.model.losses:
            loss += tf.add_n(self.model.losses)
        return float(loss)

    def attach(
        self, stopping: tf.keras.callbacks.EarlyStopping | None, listeners: Sequence[tf.keras.callbacks.Callback]
    ) -> None:
        """Follows `stopping`'s best epoch, and tells `listeners` `on_test_begin` and `on_test_end` around each
        validation, as Keras' own evaluation does (the training log times an epoch's training by it)."""
        self.stopping, self.listeners = stopping, [c for c in listeners if c is not self]

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        for listener in self.listeners:
            listener.on_test_begin()
        validated = self.validate()
        for listener in self.listeners:
            listener.on_test_end({key[len("val_") :]: value for key, value in validated.logs.items()})
        if logs is not None:
            logs.update(validated.logs)
        self._by_epoch[epoch] = validated
        # the epoch just validated and the best before it are the only ones early stopping can still keep
        best = self.stopping.best_epoch if self.stopping is not None else None
        self._by_epoch = {e: v for e, v in self._by_epoch.items() if e in (epoch, best)}

    def settle(self, averaged: bool = False) -> None:
        """Sets `kept` once training has ended: the last `validate` when the model keeps the weights it saw (the
        average of the last epochs, `averaged`), else the best epoch's validation, whose weights early stopping
        restored (the last epoch's without early stopping); None when this session did not validate them."""
        if averaged:
            self.kept = self._latest
        elif self.stopping is not None and self.stopping.best_weights is not None:
            self.kept = self._by_epoch.get(self.stopping.best_epoch)
        else:
            self.kept = self._by_epoch[max(self._by_epoch)] if self._by_epoch else None


def restored(outputs: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Rows given in `order` (row `i` is the split's row `order[i]`) put back in the split's order.

    >>> restored(np.array([10.0, 20.0, 30.0]), np.array([2, 0, 1])).tolist()
    [20.0, 30.0, 10.0]
    """
    out = np.empty_like(outputs)
    out[order] = outputs
    return out


def row_order(indexed: tf.data.Dataset) -> np.ndarray:
    """The split's row of each example, in the order a validation dataset yields them: give `indexed`, the same
    pipeline built with each row's index (`np.arange(n)`) as its targets."""
    return np.concatenate([np.asarray(index) for _, index in indexed]).astype(np.int64)


@dataclass(frozen=True)
class FinalValidation:
    """The final figures of the kept weights on validation.

    Attributes:
        outputs: the kept weights' outputs in the split's order, uncalibrated.
        calibration: run.json `calibration` (`Kind.calibration.fit`), None where the kind has none.
        temperatures: its temperatures (None: T = 1).
        thresholds: run.json `thresholds`, chosen on the calibrated outputs (`Kind.choose_thresholds`).
        scores: run.json `validation` (`Kind.validation_scores` of the calibrated outputs at those thresholds).
    """

    outputs: np.ndarray
    calibration: dict[str, Any] | None
    temperatures: list[float] | None
    thresholds: list[float] | None
    scores: dict[str, float]


def final_validation(
    kind: Kind, gold: np.ndarray, kept: Validated | None, one_pass: Callable[[], np.ndarray]
) -> FinalValidation:
    """Temperature scaling, then thresholds, then the scores, fitted on the kept weights' validation outputs: those
    `kept` during training, or (where training did not validate the kept weights) those of `one_pass` over the
    validation split.

    Args:
        gold: the validation targets, in the split's order.
        kept: `ValidationOutputs.kept` after `fit`.
        one_pass: the kept weights' outputs (uncalibrated) for every validation row, in the split's order.
    """
    if kept is not None:
        logger.info("The final validation figures come from the kept weights' validation (%s)", kept.weights)
        outputs = kept.outputs
    else:
        logger.info("Training did not validate the kept weights in this session: one pass over validation")
        outputs = one_pass()
    calibration = kind.calibration.fit(outputs, gold)  # temperature scaling, before the thresholds (core.calibration)
    temperatures = calibration and calibration["temperatures"]
    calibrated = kind.calibration.apply(outputs, temperatures)
    thresholds = kind.choose_thresholds(calibrated, gold)
    scores = kind.validation_scores(gold, calibrated, thresholds)
    logger.info("Validation: %s", ", ".join(f"{name} {value:.4f}" for name, value in scores.items()))
    return FinalValidation(outputs, calibration, temperatures, thresholds, scores)
