"""Sequence-to-vector pooling that ignores padding: mean over real tokens, or the last real token."""

from __future__ import annotations

import tensorflow as tf


def _real(inputs: tf.Tensor, padding_mask: tf.Tensor | None) -> tf.Tensor:
    if padding_mask is None:
        return tf.ones(tf.shape(inputs)[:2], inputs.dtype)  # (B, T)
    return tf.cast(padding_mask, inputs.dtype)  # (B, T)


@tf.keras.saving.register_keras_serializable(package="scratch")
class MaskedMeanPooling(tf.keras.layers.Layer):
    """The average of a (B, T, C) sequence over its real tokens only, (B, C). Padding does not count."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def call(self, inputs: tf.Tensor, padding_mask: tf.Tensor | None = None, mask: tf.Tensor | None = None):
        real = _real(inputs, mask if padding_mask is None else padding_mask)[:, :, None]  # (B, T, 1)
        total = tf.reduce_sum(inputs * real, axis=1)  # (B, C)
        count = tf.maximum(tf.reduce_sum(real, axis=1), tf.cast(1.0, inputs.dtype))  # (B, 1), never 0
        return total / count  # (B, C)

    def compute_mask(self, inputs, mask=None):
        return None

    def compute_output_shape(self, input_shape):
        return tf.TensorShape([input_shape[0], input_shape[-1]])


@tf.keras.saving.register_keras_serializable(package="scratch")
class LastTokenPooling(tf.keras.layers.Layer):
    """The vector at the last real token of each row, (B, C): under a causal mask, the only one that saw it all.

    Padding must come after the real tokens (as the tokenizers produce it).
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def call(self, inputs: tf.Tensor, padding_mask: tf.Tensor | None = None, mask: tf.Tensor | None = None):
        real = _real(inputs, mask if padding_mask is None else padding_mask)  # (B, T)
        last = tf.maximum(tf.cast(tf.reduce_sum(real, axis=1), tf.int32) - 1, 0)  # (B,)
        return tf.gather(inputs, last, axis=1, batch_dims=1)  # (B, C)

    def compute_mask(self, inputs, mask=None):
        return None

    def compute_output_shape(self, input_shape):
        return tf.TensorShape([input_shape[0], input_shape[-1]])
