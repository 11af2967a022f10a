"""One Transformer decoder block: causal self-attention, cross-attention over the encoder output, feed-forward.

Besides the teacher-forced `call`, the block decodes one position at a time (`step`) against a key/value cache
of its own earlier positions and a once-computed projection of the encoder output.
"""

from __future__ import annotations

import tensorflow as tf

from scratch.attention import MultiHeadAttention, cache_mask
from scratch.block import TransformerBlock
from scratch.encoder import attention_mask


@tf.keras.saving.register_keras_serializable(package="scratch")
class TransformerDecoderBlock(TransformerBlock):
    """Causal self-attention, cross-attention and feed-forward, each with dropout, residual and LayerNorm.

    Args:
        num_heads: attention heads; the input width must be divisible by it.
        d_ff: width of the feed-forward hidden layer.
        dropout: dropout rate after each sub-layer and inside the feed-forward network.
        activation: `relu` (the original) or `gelu` in the feed-forward network.
        norm: `post` normalises after each residual sum; `pre` normalises each sub-layer's input
            (stack a final LayerNorm after the last block).
        layer_norm_epsilon: epsilon of the LayerNorms.

    Call args:
        inputs: (B, Tt, C) target-side vectors.
        memory: (B, Ts, C) encoder output.
        memory_mask: bool (B, Ts), True at real source tokens.
        padding_mask: bool (B, Tt), True at real target tokens; defaults to the Keras mask of `inputs`.
        return_attention_scores: also return the cross-attention weights (B, H, Tt, Ts).
    """

    def __init__(self, num_heads: int, d_ff: int, dropout: float = 0.0, activation: str = "relu", **kwargs):
        super().__init__(num_heads, d_ff, dropout, activation, **kwargs)

    def build(self, input_shape):
        input_shape = tf.TensorShape(input_shape)
        d_model = input_shape[-1]
        self.self_attention = MultiHeadAttention(self.num_heads, dropout=self.dropout, name="self_attention")
        self.self_attention.build(input_shape)
        self.cross_attention = MultiHeadAttention(self.num_heads, dropout=self.dropout, name="cross_attention")
        self.cross_attention.build(input_shape)
        self.self_norm, self.cross_norm, self.ff_norm = (
            tf.keras.layers.LayerNormalization(epsilon=self.layer_norm_epsilon, name=name)
            for name in ("self_attention_norm", "cross_attention_norm", "ff_norm")
        )
        for norm in (self.self_norm, self.cross_norm, self.ff_norm):
            norm.build(input_shape)
        self.ff_inner = tf.keras.layers.Dense(self.d_ff, activation=self.activation, name="ff_inner")
        self.ff_inner.build(input_shape)
        self.ff_output = tf.keras.layers.Dense(d_model, name="ff_output")
        self.ff_output.build(input_shape[:-1].concatenate([self.d_ff]))
        self.dropout_layer = tf.keras.layers.Dropout(self.dropout)
        super().build(input_shape)

    def _sublayers(self, x, self_attend, cross_attend, training):
        """The block's three residual sub-layers in `norm` order. `self_attend(query)` returns (output, cache),
        the cache None outside decoding; `cross_attend(query)` returns (output, weights).

        Returns:
            (B, Tt, C) output, the self-attention cache and the cross-attention weights.
        """
        drop = lambda y: self.dropout_layer(y, training=training)  # noqa: E731
        feed_forward = lambda y: drop(self.ff_output(drop(self.ff_inner(y))))  # noqa: E731
        if self.norm == "pre":
            attended, cache = self_attend(self.self_norm(x))
            x = x + drop(attended)  # (B, Tt, C)
            attended, weights = cross_attend(self.cross_norm(x))
            x = x + drop(attended)
            x = x + feed_forward(self.ff_norm(x))
        else:
            attended, cache = self_attend(x)
            x = self.self_norm(x + drop(attended))
            attended, weights = cross_attend(x)
            x = self.cross_norm(x + drop(attended))
            x = self.ff_norm(x + feed_forward(x))
        return x, cache, weights

    def call(
        self,
        inputs: tf.Tensor,
        memory: tf.Tensor,
        memory_mask: tf.Tensor | None = None,
        padding_mask: tf.Tensor | None = None,
        training: bool | None = None,
        return_attention_scores: bool = False,
        mask: tf.Tensor | None = None,
    ):
        padding_mask = mask if padding_mask is None else padding_mask
        causal = attention_mask(padding_mask, tf.shape(inputs)[1], causal=True)  # (B or 1, Tt, Tt)
        cross = None if memory_mask is None else tf.cast(memory_mask, tf.bool)[:, None, :]  # (B, 1, Ts)

        def self_attend(query):
            return self.self_attention(query, query, attention_mask=causal, training=training), None

        def cross_attend(query):
            return self.cross_attention(
                query, memory, attention_mask=cross, training=training, return_attention_scores=True
            )

        x, _, weights = self._sublayers(inputs, self_attend, cross_attend, training)
        return (x, weights) if return_attention_scores else x

    def memory_cache(self, memory: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """Cross-attention keys and values of the encoder output (B, Ts, C), two (B, H, Ts, D), computed once per
        source batch."""
        return self.cross_attention.key_value_cache(memory)

    def step(
        self,
        x: tf.Tensor,
        position: tf.Tensor | int,
        cache: tuple[tf.Tensor, tf.Tensor],
        memory_cache: tuple[tf.Tensor, tf.Tensor],
        memory_mask: tf.Tensor,
    ) -> tuple[tf.Tensor, tuple[tf.Tensor, tf.Tensor], tf.Tensor]:
        """Decodes Tq consecutive target positions from `position` on (usually one), in inference mode.

        Args:
            x: (B, Tq, C) the positions' input vectors.
            position: int scalar, or (B,) one per row: where the first of them sits in the target.
            cache: self-attention keys and values, two (B, H, Tmax, D); slots from `position` on are unused.
            memory_cache: `memory_cache(memory)`.
            memory_mask: bool (B, Ts), True at real source tokens.

        Returns:
            (B, Tq, C) output, the cache with these positions written in, cross-attention weights (B, H, Tq, Ts).
        """
        keep = cache_mask(position, tf.shape(x)[1], tf.shape(cache[0])[2])  # (1 or B, Tq, Tmax)
        cross = tf.cast(memory_mask, tf.bool)[:, None, :]  # (B, 1, Ts)

        def self_attend(query):
            return self.self_attention(query, query, attention_mask=keep, cache=cache, cache_update_index=position)

        def cross_attend(query):
            output, weights, _ = self.cross_attention(
                query, None, attention_mask=cross, cache=memory_cache, return_attention_scores=True
            )
            return output, weights

        return self._sublayers(x, self_attend, cross_attend, training=False)

    def compute_mask(self, inputs, mask=None):
        return mask

    def compute_output_shape(self, input_shape):
        return input_shape
