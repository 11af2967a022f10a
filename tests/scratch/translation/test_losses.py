"""The masked loss and accuracy against a case worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from scratch.translation.losses import masked_accuracy, masked_loss

# One sentence, three positions, vocabulary of 3; the last position is padding (label 0).
LABELS = np.array([[1, 2, 0]], np.int32)
LOGITS = np.array([[[0.0, 2.0, 0.0], [1.0, 0.0, 1.0], [9.0, -9.0, 0.0]]], np.float32)


def _log_softmax(row):
    total = math.log(sum(math.exp(v) for v in row))
    return [v - total for v in row]


def test_without_smoothing_it_is_the_mean_negative_log_likelihood_of_real_tokens():
    expected = -(_log_softmax([0.0, 2.0, 0.0])[1] + _log_softmax([1.0, 0.0, 1.0])[2]) / 2
    assert float(masked_loss(LABELS, LOGITS)) == pytest.approx(expected, rel=1e-6)


def test_label_smoothing_spreads_its_mass_over_the_vocabulary():
    s = 0.3
    total = 0.0
    for row, label in (([0.0, 2.0, 0.0], 1), ([1.0, 0.0, 1.0], 2)):
        logp = _log_softmax(row)
        total += -sum(((1 - s) * (k == label) + s / 3) * logp[k] for k in range(3))
    assert float(masked_loss(LABELS, LOGITS, label_smoothing=s)) == pytest.approx(total / 2, rel=1e-6)


def test_the_padded_position_does_not_count():
    changed = LOGITS.copy()
    changed[0, 2] = [-5.0, 7.0, 3.0]
    assert float(masked_loss(LABELS, changed)) == float(masked_loss(LABELS, LOGITS))


def test_accuracy_counts_only_real_tokens():
    correct, counted = masked_accuracy(LABELS, LOGITS)  # position 0 right (argmax 1); position 1 picks 0, wrong
    assert (float(correct), float(counted)) == (1.0, 2.0)
