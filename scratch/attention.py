"""Multi-head scaled dot-product attention, written out so that every step is visible, with a key/value cache for
decoding one position at a time."""

from __future__ import annotations

import tensorflow as tf


def masked_fill_value(dtype: tf.DType) -> float:
    """A logit that softmax turns into exactly 0, yet that does not overflow in half precision."""
    return -1e9 if dtype == tf.float32 or dtype == tf.float64 else float(dtype.min) / 2


def write_slots(cache: tf.Tensor, update: tf.Tensor, index: tf.Tensor | int) -> tf.Tensor:
    """`cache` (B, H, Tmax, D) with `update` (B, H, Tq, D) written into slots index .. index + Tq - 1.

    `index` is one slot for every row (a scalar) or one per row (B,). Only those slots are written (a scatter,
    not a masked sum over every slot).
    """
    shape = tf.shape(update)
    batch, heads, length = shape[0], shape[1], shape[2]
    first = tf.broadcast_to(tf.cast(index, tf.int32), [batch])  # (B,)
    slots = first[:, None, None] + tf.range(length)[None, None, :]  # (B, 1, Tq)
    grid = [batch, heads, length]
    at = tf.stack(
        [
            tf.broadcast_to(tf.range(batch)[:, None, None], grid),
            tf.broadcast_to(tf.range(heads)[None, :, None], grid),
            tf.broadcast_to(slots, grid),
        ],
        axis=-1,
    )  # (B, H, Tq, 3): row, head, slot of each written vector
    return tf.tensor_scatter_nd_update(cache, at, update)


def cache_mask(index: tf.Tensor | int, queries: tf.Tensor | int, slots: tf.Tensor | int) -> tf.Tensor:
    """Which cache slots each of `queries` positions, from slot `index` on (a scalar or one per row (B,)), may
    see under a causal mask: bool (1 or B, Tq, Tmax), True at slot j for query i when j <= index + i."""
    first = tf.reshape(tf.cast(index, tf.int32), [-1])  # (1 or B,)
    positions = first[:, None] + tf.range(queries)[None, :]  # (1 or B, Tq)
    return tf.range(slots)[None, None, :] <= positions[:, :, None]  # (1 or B, Tq, Tmax)


@tf.keras.saving.register_keras_serializable(package="scratch")
class MultiHeadAttention(tf.keras.layers.Layer):
    """Q/K/V projections, split heads, softmax(QK^T / sqrt(d_head) + mask) V, merge heads, output projection.

    With a `cache` the layer decodes: the cache holds the keys and values of the positions seen so far, two
    (B, H, Tmax, D), and the layer works in one of two modes (as keras-hub's `CachedMultiHeadAttention`):
    - `cache_update_index` given (self-attention while decoding): the keys and values of `value` (B, Tq, C) are
      written into slots index .. index + Tq - 1 and the queries attend to the whole cache; `attention_mask`
      says which slots each query may see (the written ones up to its own position);
    - `cache_update_index` None (cross-attention while decoding): the cache is the encoder output's keys and
      values, computed once by `key_value_cache`, and `value` and `key` are not read.

    Args:
        num_heads: number of heads H.
        dropout: dropout rate on the attention weights.

    Call args:
        query: (B, Tq, C).
        value: (B, Tk, C).
        key: (B, Tk, C); defaults to `value`.
        attention_mask: bool, broadcastable to (B, Tq, Tk); False marks a key a query must not see.
        cache: (keys, values), two (B, H, Tmax, D), or None.
        cache_update_index: int scalar or (B,), the first slot `value`'s keys and values are written to.
        return_attention_scores: also return the weights, (B, H, Tq, Tk).

    Returns:
        The output (B, Tq, C); then the weights if asked; then the cache, updated, if one was given.
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

    def key_value_cache(self, value: tf.Tensor, key: tf.Tensor | None = None) -> tuple[tf.Tensor, tf.Tensor]:
        """The keys and values of `value` (B, T, C) (and `key`, default `value`) split into heads, two
        (B, H, T, D): a static cache (cross-attention over an encoder output computed once per source batch)."""
        key = value if key is None else key
        return self._split_heads(self.key_dense(key)), self._split_heads(self.value_dense(value))

    def call(
        self,
        query: tf.Tensor,
        value: tf.Tensor | None,
        key: tf.Tensor | None = None,
        attention_mask: tf.Tensor | None = None,
        cache: tuple[tf.Tensor, tf.Tensor] | None = None,
        cache_update_index: tf.Tensor | int | None = None,
        training: bool | None = None,
        return_attention_scores: bool = False,
    ):
        if cache is None and cache_update_index is not None:
            raise ValueError("cache_update_index needs a cache to write into.")
        if cache is None:
            keys, values = self.key_value_cache(value, key)  # (B, H, Tk, D)
        elif cache_update_index is None:
            keys, values = cache  # (B, H, Tk, D), projected once
        else:
            new_keys, new_values = self.key_value_cache(value, key)  # (B, H, Tq, D)
            keys = write_slots(cache[0], new_keys, cache_update_index)  # (B, H, Tmax, D)
            values = write_slots(cache[1], new_values, cache_update_index)
            cache = (keys, values)
        q = self._split_heads(self.query_dense(query))  # (B, H, Tq, D)
        scores = tf.matmul(q, keys, transpose_b=True) * tf.cast(self.d_head**-0.5, q.dtype)  # (B, H, Tq, Tk)
        if attention_mask is not None:
            keep = tf.expand_dims(tf.cast(attention_mask, tf.bool), axis=1)  # (B, 1, Tq, Tk)
            scores = tf.where(keep, scores, tf.cast(masked_fill_value(scores.dtype), scores.dtype))
        weights = tf.nn.softmax(scores, axis=-1)  # (B, H, Tq, Tk), rows sum to 1
        context = tf.matmul(self.dropout_layer(weights, training=training), values)  # (B, H, Tq, D)
        context = tf.transpose(context, [0, 2, 1, 3])  # (B, Tq, H, D)
        shape = tf.shape(context)
        context = tf.reshape(context, [shape[0], shape[1], self.num_heads * self.d_head])  # (B, Tq, C)
        output = self.output_dense(context)  # (B, Tq, C)
        returned = (output,) + ((weights,) if return_attention_scores else ()) + ((cache,) if cache is not None else ())
        return returned if len(returned) > 1 else output

    def compute_output_shape(self, query_shape, value_shape=None, key_shape=None):
        return query_shape

    def get_config(self):
        return {**super().get_config(), "num_heads": self.num_heads, "dropout": self.dropout}
