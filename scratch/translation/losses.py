"""Cross-entropy and token accuracy over real target tokens only: padding (id 0) counts for nothing."""

from __future__ import annotations

import tensorflow as tf

from scratch.translation.tokenizer import PAD_ID


def masked_loss(labels: tf.Tensor, logits: tf.Tensor, label_smoothing: float = 0.0) -> tf.Tensor:
    """Mean label-smoothed cross-entropy over the positions whose label is not padding.

    The smoothed target puts `1 - label_smoothing` on the label and spreads `label_smoothing` evenly over
    the whole vocabulary, as `tf.keras.losses.CategoricalCrossentropy(label_smoothing=...)` does.

    Args:
        labels: (B, T) int ids, 0 at padding.
        logits: (B, T, V).
    """
    vocab = tf.shape(logits)[-1]
    target = tf.one_hot(labels, vocab, dtype=tf.float32) * (1.0 - label_smoothing)
    target += label_smoothing / tf.cast(vocab, tf.float32)  # (B, T, V)
    per_token = tf.nn.softmax_cross_entropy_with_logits(target, tf.cast(logits, tf.float32))  # (B, T)
    mask = tf.cast(tf.not_equal(labels, PAD_ID), tf.float32)
    return tf.reduce_sum(per_token * mask) / tf.maximum(tf.reduce_sum(mask), 1.0)


def masked_accuracy(labels: tf.Tensor, logits: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
    """(correct, counted): how many non-padding positions the argmax gets right, and how many there are."""
    mask = tf.not_equal(labels, PAD_ID)
    hits = tf.logical_and(mask, tf.equal(tf.argmax(logits, axis=-1, output_type=labels.dtype), labels))
    return tf.reduce_sum(tf.cast(hits, tf.float32)), tf.reduce_sum(tf.cast(mask, tf.float32))
