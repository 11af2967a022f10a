"""Sinusoidal position encoding (Vaswani et al., 2017, section 3.5), added to token embeddings."""

from __future__ import annotations

import math

import tensorflow as tf


def sinusoid_at(positions: tf.Tensor, depth: int, dtype: tf.DType = tf.float32) -> tf.Tensor:
    """PE[pos, 2i] = sin(pos / 10000^(2i/depth)), PE[pos, 2i+1] = cos(same) at every int position of `positions`
    (any shape S): (*S, depth)."""
    angles_at = tf.cast(positions, tf.float32)[..., None]  # (*S, 1)
    pairs = tf.range(0, depth, 2, dtype=tf.float32)  # (ceil(C/2),)
    frequencies = tf.exp(-math.log(10000.0) * pairs / depth)  # (ceil(C/2),)
    angles = angles_at * frequencies  # (*S, ceil(C/2))
    table = tf.stack([tf.sin(angles), tf.cos(angles)], axis=-1)  # (*S, ceil(C/2), 2): sin, cos interleaved
    table = tf.reshape(table, tf.concat([tf.shape(positions), [-1]], axis=0))[..., :depth]  # (*S, C)
    return tf.cast(table, dtype)


def sinusoid(
    length: int | tf.Tensor, depth: int, dtype: tf.DType = tf.float32, start: int | tf.Tensor = 0
) -> tf.Tensor:
    """The (length, depth) table of the positions start .. start + length - 1 (`sinusoid_at`).

    Computed on the fly for the batch's own length, so no maximum length is baked into the weights.
    """
    return sinusoid_at(tf.range(start, start + length), depth, dtype)


@tf.keras.saving.register_keras_serializable(package="scratch")
class SinusoidalPositionEncoding(tf.keras.layers.Layer):
    """Adds the sinusoid table to a (B, T, C) sequence that stands at positions `start` onwards, one start for
    every row or one per row (B,) (cached decoding feeds a position at a time, rows of a decoder-only batch at
    their own positions); the mask passes through unchanged."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def call(self, inputs: tf.Tensor, start: int | tf.Tensor = 0) -> tf.Tensor:
        first = tf.reshape(tf.cast(start, tf.int32), [-1, 1])  # (1 or B, 1)
        positions = first + tf.range(tf.shape(inputs)[1])[None, :]  # (1 or B, T)
        return inputs + sinusoid_at(positions, inputs.shape[-1], inputs.dtype)  # (B, T, C)

    def compute_output_shape(self, input_shape):
        return input_shape
