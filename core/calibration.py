"""Temperature scaling (Guo et al. 2017): a model's probabilities made to mean what they say, fitted on validation.

A classifier's outputs are probabilities; their scores (the logits up to what the activation discards) are read
back from them: the log of each class's probability for a softmax (`class_scores`, which differ from the logits by
a constant per row), the log-odds of each label's for independent sigmoids (`label_scores`). Dividing the scores
by a temperature T > 0 and activating again gives the calibrated probabilities: T > 1 softens an overconfident
model, T < 1 sharpens an underconfident one, and the order of the scores (a softmax's argmax, a label's ranking)
never changes. A single-label model gets one temperature (`fit_softmax`); a multi-label model one per label
(`fit_sigmoid`), each minimising that label's validation log loss on its own. Each temperature minimises the
validation negative log-likelihood over log T (`scipy.optimize.minimize_scalar`, bounded).

The same arithmetic runs in numpy (`softmax_calibrated`, `sigmoid_calibrated`: what `predict_proba` gives), in
TensorFlow (`softmax_calibrated_tensor`, `sigmoid_calibrated_tensor`: the SavedModel and TFLite exports) and as
ONNX nodes appended to a graph (`append_to_onnx`: the ONNX exports), so that every export gives the probabilities
`predict_proba` gives. Probabilities are floored at float32's smallest normal number before the log, in all three.

    >>> probs = np.array([[0.99, 0.01], [0.2, 0.8]], np.float32)
    >>> [[round(float(p), 4) for p in row] for row in softmax_calibrated(probs, [1.0])]
    [[0.99, 0.01], [0.2, 0.8]]
    >>> [[round(float(p), 4) for p in row] for row in softmax_calibrated(probs, [2.0])]  # softer, same argmax
    [[0.9087, 0.0913], [0.3333, 0.6667]]
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

TINY = float(np.finfo(np.float32).tiny)  # the floor of a probability before its log
BOUNDS = (math.log(0.05), math.log(20.0))  # the temperatures searched, as log T
METHOD = "temperature"


def class_scores(probs: np.ndarray) -> np.ndarray:
    """Softmax probabilities (n, C) as scores whose softmax gives them back: their logs, float64."""
    return np.log(np.maximum(np.asarray(probs, np.float64), TINY))


def label_scores(probs: np.ndarray) -> np.ndarray:
    """Independent label probabilities (n, L) as their log-odds, float64."""
    probs = np.asarray(probs, np.float64)
    return np.log(np.maximum(probs, TINY)) - np.log(np.maximum(1.0 - probs, TINY))


def softmax_calibrated(probs: np.ndarray, temperatures: list[float]) -> np.ndarray:
    """Softmax probabilities (n, C) at the one temperature `temperatures[0]`, float32."""
    scores = class_scores(probs) / temperatures[0]
    scores -= scores.max(axis=1, keepdims=True)
    exp = np.exp(scores)
    return (exp / exp.sum(axis=1, keepdims=True)).astype(np.float32)


def sigmoid_calibrated(probs: np.ndarray, temperatures: list[float]) -> np.ndarray:
    """Label probabilities (n, L) each at its label's temperature (L,), float32."""
    scores = label_scores(probs) / np.asarray(temperatures, np.float64)
    return (0.5 * (1.0 + np.tanh(0.5 * scores))).astype(np.float32)  # the sigmoid, without overflow


def softmax_nll(scores: np.ndarray, gold: np.ndarray, temperature: float) -> float:
    """Mean negative log-likelihood of the gold classes (n,) under softmax(scores / T)."""
    scaled = scores / temperature
    top = scaled.max(axis=1, keepdims=True)
    log_norm = top[:, 0] + np.log(np.exp(scaled - top).sum(axis=1))
    return float(np.mean(log_norm - scaled[np.arange(len(gold)), gold]))


def sigmoid_nll(scores: np.ndarray, gold: np.ndarray, temperature: float | np.ndarray) -> float:
    """Mean binary negative log-likelihood of 0/1 gold (n,) or (n, L) under sigmoid(scores / T)."""
    scaled = scores / temperature
    # -log sigmoid(z) = softplus(-z); -log(1 - sigmoid(z)) = softplus(z)
    return float(np.mean(np.where(gold > 0, np.logaddexp(0.0, -scaled), np.logaddexp(0.0, scaled))))


def fit_temperature(nll) -> float:
    """The temperature minimising `nll(T)`, searched over log T within `BOUNDS`."""
    from scipy.optimize import minimize_scalar

    found = minimize_scalar(lambda log_t: nll(math.exp(log_t)), bounds=BOUNDS, method="bounded")
    return float(math.exp(found.x))


def record(temperatures: list[float], before: float, after: float) -> dict[str, Any]:
    """run.json `calibration`."""
    return {
        "method": METHOD,
        "temperatures": [float(t) for t in temperatures],
        "validation_nll_before": float(before),
        "validation_nll_after": float(after),
    }


def fit_softmax(probs: np.ndarray, gold: np.ndarray) -> dict[str, Any]:
    """One temperature for softmax probabilities (n, C) against gold class ids (n,): run.json `calibration`."""
    scores, gold = class_scores(probs), np.asarray(gold, np.int64)
    temperature = fit_temperature(lambda t: softmax_nll(scores, gold, t))
    return record([temperature], softmax_nll(scores, gold, 1.0), softmax_nll(scores, gold, temperature))


def fit_sigmoid(probs: np.ndarray, gold: np.ndarray) -> dict[str, Any]:
    """One temperature per label for label probabilities (n, L) against 0/1 gold (n, L): run.json `calibration`.
    A label that validation holds always or never keeps T = 1: its log loss only falls as T shrinks, which says
    nothing about how sure the model should be."""
    scores, gold = label_scores(probs), np.asarray(gold, np.float64)
    temperatures = [
        fit_temperature(lambda t, k=k: sigmoid_nll(scores[:, k], gold[:, k], t))
        if 0 < gold[:, k].sum() < len(gold)
        else 1.0
        for k in range(gold.shape[1])
    ]
    t = np.asarray(temperatures)
    return record(temperatures, sigmoid_nll(scores, gold, 1.0), sigmoid_nll(scores, gold, t))


# --- in TensorFlow (the SavedModel and TFLite exports) ---------------------------------------------------------------


def softmax_calibrated_tensor(probs: Any, temperatures: list[float]) -> Any:
    """`softmax_calibrated` on a float32 tensor (B, C)."""
    import tensorflow as tf

    return tf.nn.softmax(tf.math.log(tf.maximum(probs, TINY)) / temperatures[0], axis=-1)


def sigmoid_calibrated_tensor(probs: Any, temperatures: list[float]) -> Any:
    """`sigmoid_calibrated` on a float32 tensor (B, L)."""
    import tensorflow as tf

    scores = tf.math.log(tf.maximum(probs, TINY)) - tf.math.log(tf.maximum(1.0 - probs, TINY))  # (B, L)
    return tf.sigmoid(scores / tf.constant(temperatures, tf.float32))


# --- in ONNX (the ONNX exports) ---------------------------------------------------------------------------------------


def append_to_onnx(path: Path, activation: str, temperatures: list[float]) -> None:
    """Rewrites the ONNX model at `path` so that its one output, probabilities (B, K), comes out calibrated:
    `activation` (`Softmax` or `Sigmoid`) of the scores over the temperatures, as `softmax_calibrated` and
    `sigmoid_calibrated` compute them. The output keeps its name."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(path))
    graph = model.graph
    name = graph.output[0].name
    raw = f"{name}_uncalibrated"
    for node in graph.node:
        node.output[:] = [raw if out == name else out for out in node.output]
        node.input[:] = [raw if inp == name else inp for inp in node.input]
    inverse = np.asarray([1.0 / t for t in temperatures], np.float32)
    constants = {
        "calibration_tiny": np.asarray(TINY, np.float32),
        "calibration_one": np.asarray(1.0, np.float32),
        "calibration_inverse_temperatures": inverse if activation == "Sigmoid" else inverse[:1],
    }
    graph.initializer.extend(numpy_helper.from_array(value, key) for key, value in constants.items())
    nodes = [
        helper.make_node("Max", [raw, "calibration_tiny"], ["calibration_floored"]),
        helper.make_node("Log", ["calibration_floored"], ["calibration_log"]),
    ]
    scores = "calibration_log"
    if activation == "Sigmoid":  # log-odds: log p - log(1 - p)
        nodes += [
            helper.make_node("Sub", ["calibration_one", raw], ["calibration_complement"]),
            helper.make_node("Max", ["calibration_complement", "calibration_tiny"], ["calibration_complement_floored"]),
            helper.make_node("Log", ["calibration_complement_floored"], ["calibration_log_complement"]),
            helper.make_node("Sub", ["calibration_log", "calibration_log_complement"], ["calibration_log_odds"]),
        ]
        scores = "calibration_log_odds"
    nodes += [
        helper.make_node("Mul", [scores, "calibration_inverse_temperatures"], ["calibration_scaled"]),
        helper.make_node(
            activation, ["calibration_scaled"], [name], **({"axis": -1} if activation == "Softmax" else {})
        ),
    ]
    graph.node.extend(nodes)
    graph.output[0].type.tensor_type.elem_type = TensorProto.FLOAT
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


# --- by kind (`Kind.calibration`) ---------------------------------------------------------------------------------------


class Calibration:
    """How a kind's outputs are temperature-scaled, in numpy, TensorFlow and ONNX: here not at all (a kind that gives
    values has nothing to calibrate: `fit` gives None and the outputs stay as they are)."""

    def fit(self, outputs: np.ndarray, targets: np.ndarray) -> dict[str, Any] | None:
        """run.json `calibration` fitted on validation outputs and targets (`record`), or None."""
        return None

    def apply(self, outputs: np.ndarray, temperatures: list[float] | None) -> np.ndarray:
        """The outputs (n, K) at the recorded temperatures (None: as they are)."""
        return outputs

    def apply_tensor(self, outputs: Any, temperatures: list[float] | None) -> Any:
        """`apply` on a float32 tensor, inside an exported graph."""
        return outputs

    def apply_onnx(self, path: Path, temperatures: list[float] | None) -> None:
        """Rewrites the ONNX model at `path` so that its outputs come out as `apply` gives them."""


@dataclass(frozen=True)
class TemperatureScaling(Calibration):
    """Temperature scaling of one activation's outputs: `fitted` fits the temperatures (`fit_softmax`, `fit_sigmoid`),
    `scaled` and `scaled_tensor` apply them in numpy and TensorFlow, `activation` names the ONNX node re-applied."""

    fitted: Callable[[np.ndarray, np.ndarray], dict[str, Any]]
    scaled: Callable[[np.ndarray, list[float]], np.ndarray]
    scaled_tensor: Callable[[Any, list[float]], Any]
    activation: str

    def fit(self, outputs: np.ndarray, targets: np.ndarray) -> dict[str, Any] | None:
        return self.fitted(outputs, targets)

    def apply(self, outputs: np.ndarray, temperatures: list[float] | None) -> np.ndarray:
        return outputs if temperatures is None else self.scaled(outputs, temperatures)

    def apply_tensor(self, outputs: Any, temperatures: list[float] | None) -> Any:
        return outputs if temperatures is None else self.scaled_tensor(outputs, temperatures)

    def apply_onnx(self, path: Path, temperatures: list[float] | None) -> None:
        if temperatures is not None:
            append_to_onnx(path, self.activation, temperatures)


NONE = Calibration()
SOFTMAX = TemperatureScaling(fit_softmax, softmax_calibrated, softmax_calibrated_tensor, "Softmax")  # one temperature
SIGMOID = TemperatureScaling(fit_sigmoid, sigmoid_calibrated, sigmoid_calibrated_tensor, "Sigmoid")  # one per label
