"""The distillation loss against hand-worked cases, and the packing of targets it reads."""

from __future__ import annotations

import math

import numpy as np
import pytest
import tensorflow as tf

from scratch.distill.loss import DistillationLoss, GoldAccuracy, pack_targets


def softmax(z: list[float]) -> list[float]:
    e = [math.exp(v) for v in z]
    return [v / sum(e) for v in e]


def test_packing_puts_gold_teacher_and_the_real_flag_side_by_side():
    packed = pack_targets(np.array([1, -1]), np.array([[0.5, -0.5], [2.0, 1.0]], np.float32))
    np.testing.assert_array_equal(packed, [[0, 1, 0.5, -0.5, 1], [0, 0, 2.0, 1.0, 0]])


def test_the_temperature_scaled_kl_term_against_a_hand_worked_case():
    # Teacher logits (2, 0), model logits (0, 0), T = 2: the teacher at T is softmax(1, 0), the model uniform.
    t = 2.0
    p = softmax([1.0, 0.0])
    kl = p[0] * math.log(p[0] / 0.5) + p[1] * math.log(p[1] / 0.5)
    targets = tf.constant(pack_targets(np.array([0, -1]), np.array([[2.0, 0.0], [2.0, 0.0]], np.float32)))
    logits = tf.zeros([2, 2])
    only_teacher = DistillationLoss(2, weight=0.0, temperature=t, reduction="none")(targets, logits).numpy()
    np.testing.assert_allclose(only_teacher, [t**2 * kl, t**2 * kl], rtol=1e-5)
    # A = 0.25: the real row adds a quarter of the gold cross-entropy (ln 2 for a uniform model); the augmented
    # row keeps only the teacher term.
    mixed = DistillationLoss(2, weight=0.25, temperature=t, reduction="none")(targets, logits).numpy()
    np.testing.assert_allclose(mixed, [0.25 * math.log(2) + 0.75 * t**2 * kl, 0.75 * t**2 * kl], rtol=1e-5)


def test_log_probabilities_give_the_same_loss_as_the_logits_they_came_from():
    logits = np.array([[3.0, 1.0, -2.0]], np.float32)
    log_p = logits - np.log(np.exp(logits).sum())
    model = tf.constant([[0.3, -0.1, 0.4]])
    loss = DistillationLoss(3, weight=0.0, temperature=3.0, reduction="none")
    from_logits = loss(tf.constant(pack_targets(np.array([0]), logits)), model).numpy()
    from_log_p = loss(tf.constant(pack_targets(np.array([0]), log_p)), model).numpy()
    np.testing.assert_allclose(from_logits, from_log_p, rtol=1e-5)


def test_a_model_equal_to_the_teacher_pays_no_teacher_term_and_weight_one_is_plain_cross_entropy():
    teacher = np.array([[1.5, -0.5]], np.float32)
    targets = tf.constant(pack_targets(np.array([1]), teacher))
    assert DistillationLoss(2, 0.0, 4.0, reduction="none")(targets, tf.constant(teacher)).numpy()[0] == pytest.approx(
        0.0, abs=1e-6
    )
    hard = DistillationLoss(2, 1.0, 4.0, label_smoothing=0.1, reduction="none")(targets, tf.constant(teacher))
    expected = tf.keras.losses.categorical_crossentropy([[0.0, 1.0]], teacher, from_logits=True, label_smoothing=0.1)
    np.testing.assert_allclose(hard.numpy(), expected.numpy(), rtol=1e-6)


def test_accuracy_counts_only_the_real_rows():
    targets = pack_targets(np.array([0, 1, -1, -1]), np.zeros([4, 2], np.float32))
    logits = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0]], np.float32)
    metric = GoldAccuracy(2)
    metric.update_state(tf.constant(targets), tf.constant(logits))
    assert float(metric.result()) == pytest.approx(0.5)
