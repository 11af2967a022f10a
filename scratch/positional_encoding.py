"""Sinusoidal position encoding (Vaswani et al., 2017, section 3.5), added to token embeddings."""

from __future__ import annotations

import math

import tensorflow as tf


def sinusoid(
    length: int | tf.Tensor, depth: int, dtype: tf.DType = tf.float32, start: int | tf.Tensor = 0
) -> tf.Tensor:
    """The (length, depth) table PE[pos, 2i] = sin(pos / 10000^(2i/depth)), PE[pos, 2i+1] = cos(same), for the
    positions start .. start + length - 1.

    Computed on the fly for the batch's own length, so no maximum length is baked into the weights.
    """
    positions = tf.cast(tf.range(start, start + length), tf.float32)[:, None]  # (T, 1)
    pairs = tf.range(0, depth, 2, dtype=tf.float32)  # (ceil(C/2),)
    frequencies = tf.exp(-math.log(10000.0) * pairs / depth)[None, :]  # (1, ceil(C/2))
    angles = positions * frequencies  # (T, ceil(C/2))
    table = tf.stack([tf.sin(angles), tf.cos(angles)], axis=-1)  # (T, ceil(C/2), 2): sin, cos interleaved
    table = tf.reshape(table, [length, -1])[:, :depth]  # (T, C)
    return tf.cast(table, dtype)


@tf.keras.saving.register_keras_serializable(package="scratch")
class SinusoidalPositionEncoding(tf.keras.layers.Layer):
    """Adds the sinusoid table to a (B, T, C) sequence that stands at positions `start` onwards (a cached decoding
    step feeds one position at a time); the mask passes through unchanged."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def call(self, inputs: tf.Tensor, start: int | tf.Tensor = 0) -> tf.Tensor:
        shape = tf.shape(inputs)
        return inputs + sinusoid(shape[1], inputs.shape[-1], inputs.dtype, start)[None]  # (B, T, C)

    def compute_output_shape(self, input_shape):
        return input_shape
