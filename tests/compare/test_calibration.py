from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import log_loss as sklearn_log_loss

from compare.scoring.calibration import expected_calibration_error, log_loss, reliability


def binary_probs(confidence: np.ndarray, pred: np.ndarray) -> np.ndarray:
    probs = np.empty((len(pred), 2))
    probs[np.arange(len(pred)), pred] = confidence
    probs[np.arange(len(pred)), 1 - pred] = 1 - confidence
    return probs


def test_ece_is_near_zero_for_a_calibrated_model() -> None:
    rng = np.random.default_rng(0)
    n = 40_000
    confidence = rng.uniform(0.5, 1.0, n)
    pred = rng.integers(0, 2, n)
    gold = np.where(rng.random(n) < confidence, pred, 1 - pred)  # right exactly as often as it claims
    assert expected_calibration_error(binary_probs(confidence, pred), gold, 15) < 0.01


def test_ece_is_one_half_for_a_certain_model_that_is_right_half_the_time() -> None:
    pred = np.tile([0, 1], 500)
    gold = np.tile([0, 0], 500)
    assert expected_calibration_error(binary_probs(np.ones(1000), pred), gold, 15) == pytest.approx(0.5)


def test_reliability_bins_count_every_example_once() -> None:
    probs = binary_probs(np.array([0.55, 0.62, 0.97, 1.0]), np.array([0, 1, 1, 0]))
    table = reliability(probs, np.array([0, 0, 1, 1]), 10)
    assert [row["count"] for row in table] == [0, 0, 0, 0, 0, 1, 1, 0, 0, 2]
    assert table[9]["accuracy"] == 0.5 and table[9]["confidence"] == pytest.approx(0.985)


def test_log_loss_matches_scikit_learn() -> None:
    rng = np.random.default_rng(3)
    probs = rng.dirichlet(np.ones(4), 200)
    gold = rng.integers(0, 4, 200)
    assert log_loss(probs, gold) == pytest.approx(sklearn_log_loss(gold, probs, labels=range(4)))
