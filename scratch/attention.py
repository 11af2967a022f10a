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


def project_keys_values(attention: MultiHeadAttention, x: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
    """The attention layer's keys and values of `x` (B, T, C), split into heads: two (B, H, T, D)."""
    return attention._split_heads(attention.key_dense(x)), attention._split_heads(attention.value_dense(x))


def attend(
    attention: MultiHeadAttention, query: tf.Tensor, keys: tf.Tensor, values: tf.Tensor, keep: tf.Tensor
) -> tuple[tf.Tensor, tf.Tensor]:
    """`attention` applied to already projected keys and values, as `MultiHeadAttention.call` computes it.

    Args:
        query: (B, Tq, C) inputs; keys, values: (B, H, Tk, D); keep: bool broadcastable to (B, H, Tq, Tk).

    Returns:
        (B, Tq, C) outputs and (B, H, Tq, Tk) weights.
    """
    q = attention._split_heads(attention.query_dense(query))  # (B, H, Tq, D)
    scores = tf.matmul(q, keys, transpose_b=True) * tf.cast(attention.d_head**-0.5, q.dtype)  # (B, H, Tq, Tk)
    scores = tf.where(keep, scores, tf.cast(masked_fill_value(scores.dtype), scores.dtype))
    weights = tf.nn.softmax(scores, axis=-1)  # (B, H, Tq, Tk)
    context = tf.transpose(tf.matmul(weights, values), [0, 2, 1, 3])  # (B, Tq, H, D)
    shape = tf.shape(context)
    context = tf.reshape(context, [shape[0], shape[1], attention.num_heads * attention.d_head])  # (B, Tq, C)
    return attention.output_dense(context), weights


def attend_cached(
    attention: MultiHeadAttention, query: tf.Tensor, position: tf.Tensor, cache: tuple[tf.Tensor, tf.Tensor]
) -> tuple[tf.Tensor, tf.Tensor, tuple[tf.Tensor, tf.Tensor]]:
    """Causal self-attention of the one position `position` against a key/value cache, in inference mode.

    Args:
        query: (B, 1, C) the position's input; position: scalar int; cache: keys and values, two (B, H, Tmax, D),
            holding the earlier positions in their slots (slots from `position` on are zero).

    Returns:
        (B, 1, C) output, (B, H, 1, Tmax) weights, and the cache with this position's keys and values written in.
    """
    keys, values = cache
    slots = tf.shape(keys)[2]
    here = tf.cast(tf.equal(tf.range(slots), position), keys.dtype)[None, None, :, None]  # (1, 1, Tmax, 1)
    new_keys, new_values = project_keys_values(attention, query)  # (B, H, 1, D)
    keys, values = keys + here * new_keys, values + here * new_values
    seen = tf.range(slots)[None, None, None, :] <= position  # (1, 1, 1, Tmax)
    output, weights = attend(attention, query, keys, values, seen)
    return output, weights, (keys, values)
