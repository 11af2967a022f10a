"""Temperature scaling (`core.calibration`, `Kind.calibration`): it lowers validation log loss, keeps every
decision's order, agrees with an independent search, and runs the same in numpy, TensorFlow and ONNX Runtime."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.special import expit, log_softmax, softmax
from sklearn.metrics import log_loss

from core import kinds
from core.calibration import TINY, append_to_onnx, sigmoid_calibrated, softmax_calibrated


def overconfident(n: int = 2000, classes: int = 3, sharpness: float = 4.0, seed: int = 0):
    """A fake model right about 70% of the time whose logits are `sharpness` times too large: (probs, gold)."""
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, classes, n)
    logits = rng.normal(0, 1, (n, classes))
    right = rng.random(n) < 0.7
    guessed = np.where(right, gold, rng.integers(0, classes, n))
    logits[np.arange(n), guessed] += 1.5
    return softmax(sharpness * logits, axis=1).astype(np.float32), gold


def test_the_fitted_temperature_lowers_an_overconfident_model_s_log_loss_and_keeps_its_argmax() -> None:
    probs, gold = overconfident()
    kind = kinds.get("single_label_classification")
    found = kind.calibration.fit(probs, gold)
    (temperature,) = found["temperatures"]
    calibrated = kind.calibration.apply(probs, found["temperatures"])
    assert temperature > 2  # it undoes most of the sharpening
    before, after = (log_loss(gold, p.astype(np.float64)) for p in (probs, calibrated))  # float64: clipped at 1e-16
    assert after < before - 0.1
    assert found["validation_nll_before"] == pytest.approx(before, rel=1e-4)
    assert found["validation_nll_after"] == pytest.approx(after, rel=1e-4)
    np.testing.assert_array_equal(calibrated.argmax(axis=1), probs.argmax(axis=1))
    np.testing.assert_allclose(calibrated.sum(axis=1), 1.0, atol=1e-6)

    # the same NLL minimised independently: SciPy's Brent search over T itself, from scikit-learn's log loss
    log_p = np.log(probs.astype(np.float64))
    independent = minimize_scalar(
        lambda t: log_loss(gold, softmax(log_p / t, axis=1), labels=[0, 1, 2]), bounds=(0.05, 20), method="bounded"
    ).x
    assert temperature == pytest.approx(independent, rel=1e-3)


def test_an_underconfident_model_is_sharpened() -> None:
    probs, gold = overconfident(sharpness=0.4, seed=1)
    (temperature,) = kinds.get("single_label_classification").calibration.fit(probs, gold)["temperatures"]
    assert temperature < 1


def test_each_label_gets_its_own_temperature() -> None:
    rng = np.random.default_rng(2)
    n = 3000
    gold = (rng.random((n, 3)) < [0.3, 0.5, 0.2]).astype(np.float32)
    evidence = (2 * gold - 1) + rng.normal(0, 1.2, (n, 3))  # (n, L)
    sharpness = np.array([3.0, 1.0, 0.5])  # overconfident, about right, underconfident
    probs = expit(evidence * sharpness).astype(np.float32)
    kind = kinds.get("multi_label_classification")
    found = kind.calibration.fit(probs, gold)
    temperatures = found["temperatures"]
    assert temperatures[0] > 1.5 and 0.7 < temperatures[1] < 1.4 and temperatures[2] < 0.8
    for k in range(3):  # each is its label's own minimum of the binary log loss, found independently
        scores = np.log(probs[:, k].astype(np.float64)) - np.log1p(-probs[:, k].astype(np.float64))
        independent = minimize_scalar(
            lambda t, k=k, s=scores: log_loss(gold[:, k], expit(s / t), labels=[0, 1]),
            bounds=(0.05, 20),
            method="bounded",
        ).x
        assert temperatures[k] == pytest.approx(independent, rel=1e-3)
    calibrated = kind.calibration.apply(probs, temperatures)
    assert found["validation_nll_after"] < found["validation_nll_before"]
    for k in range(3):  # a label's ranking of the examples does not change
        np.testing.assert_array_equal(
            np.argsort(calibrated[:, k], kind="stable"), np.argsort(probs[:, k], kind="stable")
        )


def test_a_label_validation_never_holds_keeps_temperature_one() -> None:
    rng = np.random.default_rng(3)
    gold = np.stack([rng.random(200) < 0.5, np.zeros(200, bool)], axis=1).astype(np.float32)
    probs = rng.random((200, 2)).astype(np.float32)
    assert kinds.get("multi_label_classification").calibration.fit(probs, gold)["temperatures"][1] == 1.0


def test_regression_has_nothing_to_calibrate() -> None:
    kind = kinds.get("regression")
    values = np.array([1.0, 2.5], np.float32)
    assert kind.calibration.fit(values, values) is None
    assert kind.calibration.apply(values, None) is values


def test_no_temperatures_leave_the_outputs_as_they_are() -> None:
    probs, _ = overconfident(n=10)
    assert kinds.get("single_label_classification").calibration.apply(probs, None) is probs


def test_tensorflow_and_numpy_calibrate_alike() -> None:
    import tensorflow as tf

    probs, _ = overconfident(n=50)
    single = kinds.get("single_label_classification")
    np.testing.assert_allclose(
        single.calibration.apply_tensor(tf.constant(probs), [2.5]).numpy(),
        single.calibration.apply(probs, [2.5]),
        atol=1e-6,
    )
    labels = np.concatenate([probs, np.array([[1.0, 0.0, 1e-30]] * 2, np.float32)])  # saturated too
    multi = kinds.get("multi_label_classification")
    temperatures = [0.5, 2.0, 3.0]
    np.testing.assert_allclose(
        multi.calibration.apply_tensor(tf.constant(labels), temperatures).numpy(),
        multi.calibration.apply(labels, temperatures),
        atol=1e-6,
    )
    # by hand: the log-odds over T
    expected = expit(np.log(labels[:5].astype(np.float64) / (1 - labels[:5])) / temperatures)
    np.testing.assert_allclose(multi.calibration.apply(labels[:5], temperatures), expected, atol=1e-6)
    np.testing.assert_allclose(
        softmax_calibrated(probs, [2.5]), softmax(log_softmax(np.log(probs), 1) / 2.5, 1), atol=1e-6
    )


@pytest.mark.parametrize("activation", ["Softmax", "Sigmoid"])
def test_the_onnx_graph_gives_what_numpy_gives(activation: str, tmp_path: Path) -> None:
    import onnxruntime
    from onnx import TensorProto, helper

    width = 3
    # a graph that passes its probabilities through, as a converted model's last node does
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["probabilities"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, width])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [None, width])],
    )
    path = tmp_path / "model.onnx"
    import onnx

    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    temperatures = [2.0] if activation == "Softmax" else [0.5, 2.0, 3.0]
    append_to_onnx(path, activation, temperatures)
    probs, _ = overconfident(n=40)
    if activation == "Sigmoid":
        probs = np.concatenate([probs, np.array([[1.0, 0.0, TINY]], np.float32)])
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert session.get_outputs()[0].name == "probabilities"
    (served,) = session.run(None, {"x": probs})
    expected = (softmax_calibrated if activation == "Softmax" else sigmoid_calibrated)(probs, temperatures)
    np.testing.assert_allclose(served, expected, atol=1e-6)
