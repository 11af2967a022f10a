"""One Transformer encoder block: self-attention and a feed-forward network, each with residual and LayerNorm."""

from __future__ import annotations

import tensorflow as tf

from scratch.attention import MultiHeadAttention
from scratch.block import TransformerBlock


def attention_mask(padding_mask: tf.Tensor | None, length: tf.Tensor, causal: bool) -> tf.Tensor | None:
    """The (B or 1, T, T) bool mask of which keys each query may see: real tokens, and with `causal` no later ones."""
    mask = None
    if padding_mask is not None:
        mask = tf.cast(padding_mask, tf.bool)[:, None, :]  # (B, 1, T): every query sees the real keys
    if causal:
        lower = tf.linalg.band_part(tf.ones([length, length], tf.int32), -1, 0)  # (T, T), 1 on and below diagonal
        triangle = tf.cast(lower, tf.bool)[None]  # (1, T, T)
        mask = triangle if mask is None else tf.logical_and(mask, triangle)  # (B, T, T)
    return mask


@tf.keras.saving.register_keras_serializable(package="scratch")
class TransformerEncoderBlock(TransformerBlock):
    """Self-attention, dropout, residual, LayerNorm; then feed-forward, dropout, residual, LayerNorm.

    Args:
        num_heads: attention heads; the input width must be divisible by it.
        d_ff: width of the feed-forward hidden layer.
        dropout: dropout rate after attention, inside and after the feed-forward network.
        activation: `gelu` or `relu` in the feed-forward network.
        norm: `post` normalises after each residual sum (the original paper); `pre` normalises each
            sub-layer's input and leaves the residual stream untouched (stack a final LayerNorm after it).
        causal: each position attends only to itself and earlier positions (GPT-style decoder).
        layer_norm_epsilon: epsilon of the LayerNorms.

    Call args:
        inputs: (B, T, C).
        padding_mask: bool (B, T), True at real tokens; defaults to the Keras mask of `inputs`.
        return_attention_scores: also return the attention weights (B, H, T, T).
    """

    def __init__(
        self,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        activation: str = "gelu",
        norm: str = "post",
        causal: bool = False,
        layer_norm_epsilon: float = 1e-5,
        **kwargs,
    ):
        super().__init__(num_heads, d_ff, dropout, activation, norm, layer_norm_epsilon, **kwargs)
        self.causal = causal

    def build(self, input_shape):
        d_model = input_shape[-1]
        self.attention = MultiHeadAttention(self.num_heads, dropout=self.dropout, name="self_attention")
        self.attention.build(input_shape)
        self.attention_dropout = tf.keras.layers.Dropout(self.dropout)
        self.attention_norm = tf.keras.layers.LayerNormalization(epsilon=self.layer_norm_epsilon, name="attention_norm")
        self.attention_norm.build(input_shape)
        self.ff_inner = tf.keras.layers.Dense(self.d_ff, activation=self.activation, name="ff_inner")
        self.ff_inner.build(input_shape)
        self.ff_dropout = tf.keras.layers.Dropout(self.dropout)
        self.ff_output = tf.keras.layers.Dense(d_model, name="ff_output")
        self.ff_output.build(tf.TensorShape(input_shape)[:-1].concatenate([self.d_ff]))
        self.output_dropout = tf.keras.layers.Dropout(self.dropout)
        self.ff_norm = tf.keras.layers.LayerNormalization(epsilon=self.layer_norm_epsilon, name="ff_norm")
        self.ff_norm.build(input_shape)
        super().build(input_shape)

    def _feed_forward(self, x: tf.Tensor, training: bool | None) -> tf.Tensor:
        hidden = self.ff_dropout(self.ff_inner(x), training=training)  # (B, T, F)
        return self.output_dropout(self.ff_output(hidden), training=training)  # (B, T, C)

    def call(
        self,
        inputs: tf.Tensor,
        padding_mask: tf.Tensor | None = None,
        training: bool | None = None,
        return_attention_scores: bool = False,
        mask: tf.Tensor | None = None,
    ):
        padding_mask = mask if padding_mask is None else padding_mask
        keep = attention_mask(padding_mask, tf.shape(inputs)[1], self.causal)  # (B, T, T) or None

        def self_attend(query):
            return self.attention(query, query, attention_mask=keep, training=training, return_attention_scores=True)

        x, weights = self._sublayers(inputs, self_attend, training)
        return (x, weights) if return_attention_scores else x

    def _sublayers(self, x: tf.Tensor, self_attend, training: bool | None) -> tuple[tf.Tensor, object]:
        """The two residual sub-layers in `norm` order. `self_attend(query)` returns (output, extra), `extra`
        being the attention weights or the updated key/value cache; it is returned beside the output."""
        if self.norm == "pre":
            attended, extra = self_attend(self.attention_norm(x))
            x = x + self.attention_dropout(attended, training=training)  # (B, T, C)
            x = x + self._feed_forward(self.ff_norm(x), training)  # (B, T, C)
        else:
            attended, extra = self_attend(x)
            x = self.attention_norm(x + self.attention_dropout(attended, training=training))  # (B, T, C)
            x = self.ff_norm(x + self._feed_forward(x, training))  # (B, T, C)
        return x, extra

    def compute_mask(self, inputs, mask=None):
        return mask

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "causal": self.causal}
