"""Where the two pooled texts of a pair meet: InferSent's features [u, v, |u - v|, u * v] (Conneau et al., 2017)."""

from __future__ import annotations

import tensorflow as tf


@tf.keras.saving.register_keras_serializable(package="scratch")
class PairFeatures(tf.keras.layers.Layer):
    """Two vectors u and v (B, C) -> [u, v, |u - v|, u * v] (B, 4C): the texts themselves, how far apart they are
    feature by feature, and where they agree. Swapping u and v swaps the first two blocks and leaves the others."""

    def call(self, inputs: list[tf.Tensor]) -> tf.Tensor:
        u, v = inputs  # (B, C) each
        return tf.concat([u, v, tf.abs(u - v), u * v], axis=-1)  # (B, 4C)

    def compute_mask(self, inputs, mask=None):
        return None

    def compute_output_shape(self, input_shape):
        first = tf.TensorShape(input_shape[0])
        width = None if first[-1] is None else 4 * first[-1]
        return first[:-1].concatenate([width])
