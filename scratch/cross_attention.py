"""Cross-attention between the two encoded texts of a pair: each token is softly aligned with the other text and
compared with what it aligned to (decomposable attention, Parikh et al., 2016; ESIM, Chen et al., 2017).

    a (B, T1, C), b (B, T2, C) ──e = a b^T / sqrt(C), padding masked──► ã = softmax_j(e) b, b̃ = softmax_i(e^T) a
        ──[a, ã, a - ã, a * ã] and [b, b̃, b - b̃, b * b̃] (B, T, 4C)──shared dense──► (B, T1, C), (B, T2, C)
"""

from __future__ import annotations

import math

import tensorflow as tf

from scratch.attention import masked_fill_value


def aligned(scores: tf.Tensor, values: tf.Tensor, value_mask: tf.Tensor | None) -> tf.Tensor:
    """For each query row of `scores` (B, Tq, Tv), the average of `values` (B, Tv, C) under softmax(scores) over the
    real values only (`value_mask` (B, Tv)): (B, Tq, C); zeros when the other text has no real token, so that
    however much padding it has changes nothing."""
    if value_mask is None:
        return tf.matmul(tf.nn.softmax(scores, axis=-1), values)  # (B, Tq, C)
    keep = tf.cast(value_mask, tf.bool)[:, None, :]  # (B, 1, Tv)
    scores = tf.where(keep, scores, tf.cast(masked_fill_value(scores.dtype), scores.dtype))
    weights = tf.nn.softmax(scores, axis=-1) * tf.cast(keep, scores.dtype)  # (B, Tq, Tv), 0 at padding
    return tf.matmul(weights, values)  # (B, Tq, C)


@tf.keras.saving.register_keras_serializable(package="scratch")
class CrossAttention(tf.keras.layers.Layer):
    """[a (B, T1, C), b (B, T2, C)] with their padding masks -> [a compared (B, T1, C), b compared (B, T2, C)],
    masks passed through.

    Each token attends to the real tokens of the other text (scaled dot products of the encoded vectors, no
    projections, as ESIM), and [x, x̃, x - x̃, x * x̃] goes through one dense layer shared by both texts, so the
    layer reads the pair the same way whichever text comes first.

    Args:
        activation: of the comparing dense layer.
        dropout: rate on the compared vectors.
    """

    def __init__(self, activation: str = "gelu", dropout: float = 0.0, **kwargs):
        super().__init__(**kwargs)
        self.activation = activation
        self.dropout = dropout
        self.supports_masking = True

    def build(self, input_shape):
        first = tf.TensorShape(input_shape[0])
        self.compare = tf.keras.layers.Dense(first[-1], activation=self.activation, name="compare")
        self.compare.build(first[:-1].concatenate([4 * first[-1]]))
        self.dropout_layer = tf.keras.layers.Dropout(self.dropout)
        super().build(input_shape)

    def call(self, inputs: list[tf.Tensor], training: bool | None = None, mask: list | None = None) -> list[tf.Tensor]:
        a, b = inputs  # (B, T1, C), (B, T2, C)
        a_mask, b_mask = mask if mask is not None else (None, None)
        scores = tf.matmul(a, b, transpose_b=True) / math.sqrt(a.shape[-1])  # (B, T1, T2)
        a_aligned = aligned(scores, b, b_mask)  # (B, T1, C): what of b each token of a points to
        b_aligned = aligned(tf.transpose(scores, [0, 2, 1]), a, a_mask)  # (B, T2, C)
        return [self._compared(a, a_aligned, training), self._compared(b, b_aligned, training)]

    def _compared(self, x: tf.Tensor, x_aligned: tf.Tensor, training: bool | None) -> tf.Tensor:
        features = tf.concat([x, x_aligned, x - x_aligned, x * x_aligned], axis=-1)  # (B, T, 4C)
        return self.dropout_layer(self.compare(features), training=training)  # (B, T, C)

    def compute_mask(self, inputs, mask=None):
        return mask

    def compute_output_shape(self, input_shape):
        return [tf.TensorShape(shape) for shape in input_shape]

    def get_config(self):
        return {**super().get_config(), "activation": self.activation, "dropout": self.dropout}
