"""The distillation loss of every kind against hand-worked cases, the packing of targets it reads, and the
metrics on gold labels beside it."""

from __future__ import annotations

import math

import numpy as np
import pytest
import tensorflow as tf
from sklearn.metrics import f1_score

from core import kinds
from core.kinds import MULTI_LABEL, REGRESSION, SINGLE_LABEL
from core.kinds.keras_objects import MacroF1
from scratch.distill.kinds import distilled
from scratch.distill.loss import DistillationLoss, OnGold, gold_metrics, pack_targets


def soft_targets(outputs: np.ndarray, problem_type: str) -> np.ndarray:
    return distilled(kinds.get(problem_type)).soft_targets(outputs)


def softmax(z: list[float]) -> list[float]:
    e = [math.exp(v) for v in z]
    return [v / sum(e) for v in e]


def sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-z))


def per_row(loss: DistillationLoss, targets: np.ndarray, logits: np.ndarray) -> np.ndarray:
    return loss.__class__.from_config({**loss.get_config(), "reduction": "none"})(targets, tf.constant(logits)).numpy()


def test_packing_puts_gold_teacher_and_the_real_flag_side_by_side():
    packed = pack_targets(np.array([[0.0, 1.0]]), np.array([[0.5, -0.5], [2.0, 1.0]], np.float32))  # multi-hot
    np.testing.assert_array_equal(packed, [[0, 1, 0.5, -0.5, 1], [0, 0, 2.0, 1.0, 0]])  # the second row augmented
    ids = pack_targets(np.array([1]), np.array([[0.5, -0.5], [2.0, 1.0]], np.float32))  # a class id: one column
    np.testing.assert_array_equal(ids, [[1, 0.5, -0.5, 1], [0, 2.0, 1.0, 0]])
    values = pack_targets(np.array([3.5]), np.array([3.0, 1.0], np.float32))  # regression: (r,) gold, (n,) teacher
    np.testing.assert_array_equal(values, [[3.5, 3.0, 1], [0, 1.0, 0]])


def test_the_temperature_scaled_kl_term_against_a_hand_worked_case():
    # Teacher logits (2, 0), model logits (0, 0), T = 2: the teacher at T is softmax(1, 0), the model uniform.
    t = 2.0
    p = softmax([1.0, 0.0])
    kl = p[0] * math.log(p[0] / 0.5) + p[1] * math.log(p[1] / 0.5)
    targets = pack_targets(np.array([0]), np.array([[2.0, 0.0], [2.0, 0.0]], np.float32))  # gold class 0
    logits = np.zeros([2, 2], np.float32)
    only_teacher = per_row(DistillationLoss(SINGLE_LABEL, 2, weight=0.0, temperature=t), targets, logits)
    np.testing.assert_allclose(only_teacher, [t**2 * kl, t**2 * kl], rtol=1e-5)
    # A = 0.25: the real row adds a quarter of the gold cross-entropy (ln 2 for a uniform model); the augmented
    # row keeps only the teacher term.
    mixed = per_row(DistillationLoss(SINGLE_LABEL, 2, weight=0.25, temperature=t), targets, logits)
    np.testing.assert_allclose(mixed, [0.25 * math.log(2) + 0.75 * t**2 * kl, 0.75 * t**2 * kl], rtol=1e-5)


def test_multi_label_pays_each_label_s_binary_kl_at_the_temperature_averaged():
    # Labels' teacher logits (2, -4), model logits (0, 1), T = 2, gold (1, 0); the second row augmented.
    t, a = 2.0, 0.4
    teacher, model, gold = [2.0, -4.0], [0.0, 1.0], [1.0, 0.0]

    def bernoulli_kl(p: float, q: float) -> float:
        return p * math.log(p / q) + (1 - p) * math.log((1 - p) / (1 - q))

    kl = np.mean([bernoulli_kl(sigmoid(z / t), sigmoid(m / t)) for z, m in zip(teacher, model)])
    bce = np.mean([-math.log(sigmoid(m)) if g else -math.log(1 - sigmoid(m)) for g, m in zip(gold, model)])
    targets = pack_targets(np.array([gold]), np.array([teacher, teacher], np.float32))
    out = per_row(DistillationLoss(MULTI_LABEL, 2, weight=a, temperature=t), targets, np.array([model, model]))
    np.testing.assert_allclose(out, [a * bce + (1 - a) * t**2 * kl, (1 - a) * t**2 * kl], rtol=1e-5)


def test_regression_blends_the_squared_errors_to_gold_and_to_the_teacher():
    targets = pack_targets(np.array([3.0]), np.array([2.0, 4.5], np.float32))  # gold 3 (first row), teacher 2, 4.5
    out = per_row(DistillationLoss(REGRESSION, 1, weight=0.25, temperature=2.0), targets, np.array([[2.5], [4.0]]))
    np.testing.assert_allclose(out, [0.25 * 0.5**2 + 0.75 * 0.5**2, 0.75 * 0.5**2], rtol=1e-6)


@pytest.mark.parametrize(
    ("problem_type", "gold", "logits"),
    [
        (SINGLE_LABEL, [1, 0], [[0.3, -1.2], [2.0, 0.5]]),
        (MULTI_LABEL, [[1.0, 0.0], [0.0, 0.0]], [[0.3, -1.2], [2.0, 0.5]]),
        (REGRESSION, [1.5, -0.5], [[0.3], [2.0]]),
    ],
)
def test_targets_of_the_gold_alone_give_the_kind_s_own_loss(problem_type, gold, logits):
    # the validation split's targets: a distilled run's val_loss is the one a run without a teacher reports
    loss = DistillationLoss(problem_type, len(logits[0]), weight=0.3, temperature=2.0)
    expected = kinds.get(problem_type).loss()(tf.constant(gold), tf.constant(logits))
    assert float(loss(tf.constant(gold), tf.constant(logits))) == pytest.approx(float(expected), rel=1e-6)


def test_log_probabilities_give_the_same_loss_as_the_logits_they_came_from():
    logits = np.array([[3.0, 1.0, -2.0]], np.float32)
    log_p = soft_targets(tf.nn.softmax(logits).numpy(), SINGLE_LABEL)
    model = np.array([[0.3, -0.1, 0.4]], np.float32)
    loss = DistillationLoss(SINGLE_LABEL, 3, weight=0.0, temperature=3.0)
    gold = np.array([0])
    from_logits = per_row(loss, pack_targets(gold, logits), model)
    np.testing.assert_allclose(per_row(loss, pack_targets(gold, log_p), model), from_logits, rtol=1e-5)


def test_log_odds_recover_a_multi_label_teacher_s_logits_and_values_stay_values():
    logits = np.array([[3.0, -2.0, 0.0, 12.0, -15.0]], np.float32)
    np.testing.assert_allclose(soft_targets(tf.sigmoid(logits).numpy(), MULTI_LABEL), logits, atol=1e-3)
    np.testing.assert_array_equal(soft_targets(np.array([1.5, 2.0]), REGRESSION), [[1.5], [2.0]])


def test_a_model_equal_to_the_teacher_pays_no_teacher_term_and_weight_one_is_plain_cross_entropy():
    teacher = np.array([[1.5, -0.5]], np.float32)
    targets = pack_targets(np.array([1]), teacher)
    multi = pack_targets(np.array([[0.0, 1.0]]), teacher)
    assert per_row(DistillationLoss(SINGLE_LABEL, 2, 0.0, 4.0), targets, teacher)[0] == pytest.approx(0.0, abs=1e-6)
    assert per_row(DistillationLoss(MULTI_LABEL, 2, 0.0, 4.0), multi, teacher)[0] == pytest.approx(0.0, abs=1e-6)
    hard = per_row(DistillationLoss(SINGLE_LABEL, 2, 1.0, 4.0, label_smoothing=0.1), targets, teacher)
    expected = tf.keras.losses.categorical_crossentropy([[0.0, 1.0]], teacher, from_logits=True, label_smoothing=0.1)
    np.testing.assert_allclose(hard, expected.numpy(), rtol=1e-6)


def test_accuracy_counts_only_the_real_rows():
    targets = pack_targets(np.array([0, 1]), np.zeros([4, 2], np.float32))  # gold classes 0 and 1
    logits = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0]], np.float32)
    metric = OnGold(tf.keras.metrics.SparseCategoricalAccuracy(name="accuracy"), 2)
    metric.update_state(tf.constant(targets), tf.constant(logits))
    assert float(metric.result()) == pytest.approx(0.5)


def test_macro_f1_counts_only_the_real_rows_at_one_half():
    rng = np.random.default_rng(0)
    gold = (rng.random((12, 3)) < 0.4).astype(np.float32)
    logits = rng.normal(size=(20, 3)).astype(np.float32)
    metric = OnGold(MacroF1(3), 3)
    metric.update_state(tf.constant(pack_targets(gold, rng.normal(size=(20, 3)))), tf.constant(logits))
    expected = f1_score(gold, logits[:12] >= 0, average="macro", zero_division=0)
    assert float(metric.result()) == pytest.approx(expected, rel=1e-6)


def test_a_distilled_run_reports_the_kind_s_own_metrics_under_their_names():
    assert [m.name for m in gold_metrics(kinds.get(SINGLE_LABEL), 2)] == ["accuracy"]
    assert [m.name for m in gold_metrics(kinds.get(MULTI_LABEL), 3)] == ["macro_f1"]
    assert gold_metrics(kinds.get(REGRESSION), 1) == []
    gold = np.array([0, 1])  # the validation split's targets, the gold alone: every row counts
    metric = gold_metrics(kinds.get(SINGLE_LABEL), 2)[0]
    metric.update_state(tf.constant(gold), tf.constant([[1.0, 0.0], [1.0, 0.0]]))
    assert float(metric.result()) == pytest.approx(0.5)
