"""Multi-head scaled dot-product attention, written out so that every step is visible."""

from __future__ import annotations

import tensorflow as tf


def masked_fill_value(dtype: tf.DType) -> float:
    """A logit that softmax turns into exactly 0, yet that does not overflow in half precision."""
    return -1e9 if dtype == tf.float32 or dtype == tf.float64 else float(dtype.min) / 2


@tf.keras.saving.register_keras_serializable(package="scratch")
class MultiHeadAttention(tf.keras.layers.Layer):
    """Q/K/V projections, split heads, softmax(QK^T / sqrt(d_head) + mask) V, merge heads, output projection.

    Args:
        num_heads: number of heads H.
        dropout: dropout rate on the attention weights.

    Call args:
        query: (B, Tq, C).
        value: (B, Tk, C); defaults to `query` (self-attention).
        key: (B, Tk, C); defaults to `value`.
        attention_mask: bool, broadcastable to (B, Tq, Tk); False marks a key a query must not see.
        return_attention_scores: also return the weights, (B, H, Tq, Tk).
    """

    def __init__(self, num_heads: int, dropout: float = 0.0, **kwargs):
        super().__init__(**kwargs)
        self.num_heads = num_heads
        self.dropout = dropout

    def build(self, query_shape, value_shape=None, key_shape=None):
        d_model = query_shape[-1]
        if d_model % self.num_heads:
            raise ValueError(f"d_model {d_model} is not divisible by num_heads {self.num_heads}.")
        self.d_head = d_model // self.num_heads
        self.query_dense = tf.keras.layers.Dense(d_model, name="query")
        self.key_dense = tf.keras.layers.Dense(d_model, name="key")
        self.value_dense = tf.keras.layers.Dense(d_model, name="value")
        self.output_dense = tf.keras.layers.Dense(d_model, name="attention_output")
        for dense in (self.query_dense, self.key_dense, self.value_dense):
            dense.build(query_shape)
        self.output_dense.build(query_shape)
        self.dropout_layer = tf.keras.layers.Dropout(self.dropout)
        super().build(query_shape)

    def _split_heads(self, x: tf.Tensor) -> tf.Tensor:
        shape = tf.shape(x)
        x = tf.reshape(x, [shape[0], shape[1], self.num_heads, self.d_head])  # (B, T, H, D)
        return tf.transpose(x, [0, 2, 1, 3])  # (B, H, T, D)

    def call(
        self,
        query: tf.Tensor,
        value: tf.Tensor | None = None,
        key: tf.Tensor | None = None,
        attention_mask: tf.Tensor | None = None,
        training: bool | None = None,
        return_attention_scores: bool = False,
    ):
        value = query if value is None else value
        key = value if key is None else key
        q = self._split_heads(self.query_dense(query))  # (B, H, Tq, D)
        k = self._split_heads(self.key_dense(key))  # (B, H, Tk, D)
        v = self._split_heads(self.value_dense(value))  # (B, H, Tk, D)
        scores = tf.matmul(q, k, transpose_b=True) * tf.cast(self.d_head**-0.5, q.dtype)  # (B, H, Tq, Tk)
        if attention_mask is not None:
            keep = tf.expand_dims(tf.cast(attention_mask, tf.bool), axis=1)  # (B, 1, Tq, Tk)
            scores = tf.where(keep, scores, tf.cast(masked_fill_value(scores.dtype), scores.dtype))
        weights = tf.nn.softmax(scores, axis=-1)  # (B, H, Tq, Tk), rows sum to 1
        context = tf.matmul(self.dropout_layer(weights, training=training), v)  # (B, H, Tq, D)
        context = tf.transpose(context, [0, 2, 1, 3])  # (B, Tq, H, D)
        shape = tf.shape(context)
        context = tf.reshape(context, [shape[0], shape[1], self.num_heads * self.d_head])  # (B, Tq, C)
        output = self.output_dense(context)  # (B, Tq, C)
        return (output, weights) if return_attention_scores else output

    def compute_output_shape(self, query_shape, value_shape=None, key_shape=None):
        return query_shape

    def get_config(self):
        return {**super().get_config(), "num_heads": self.num_heads, "dropout": self.dropout}
