"""Distillation's view of each kind (`scratch.distill.kinds`): what a teacher's outputs become, and the teacher's term
of the loss."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from core import kinds
from core.kinds import MULTI_LABEL, REGRESSION, SINGLE_LABEL
from scratch.distill.kinds import distilled

SINGLE, MULTI, VALUES = (distilled(kinds.get(name)) for name in (SINGLE_LABEL, MULTI_LABEL, REGRESSION))


def test_each_kind_names_its_soft_targets():
    assert [k.soft_targets_name for k in (SINGLE, MULTI, VALUES)] == ["log_probabilities", "log_odds", "values"]


def test_soft_targets_give_back_the_teacher_s_tempered_outputs():
    probs = np.array([[0.2, 0.8], [0.6, 0.4]], np.float32)
    np.testing.assert_allclose(tf.nn.softmax(SINGLE.soft_targets(probs)), probs, rtol=1e-6)
    np.testing.assert_allclose(tf.sigmoid(MULTI.soft_targets(probs)), probs, rtol=1e-6)
    assert VALUES.soft_targets(np.array([1.5, 2.0])).shape == (2, 1)


def test_the_teacher_term_is_zero_when_the_student_matches_the_teacher():
    logits = tf.constant([[0.3, -1.2], [2.0, 0.5]])
    for kind in (SINGLE, MULTI, VALUES):
        np.testing.assert_allclose(kind.teacher_loss(logits, logits, 2.0), [0.0, 0.0], atol=1e-6)
    far = SINGLE.teacher_loss(logits, tf.reverse(logits, [1]), 2.0)
    assert float(tf.reduce_min(far)) > 0
