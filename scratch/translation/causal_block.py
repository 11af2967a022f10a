"""The decoder-only translator's block: causal self-attention and a feed-forward network, which also decodes
positions against a key/value cache of the earlier ones."""

from __future__ import annotations

import tensorflow as tf

from scratch.attention import cache_mask
from scratch.encoder import TransformerEncoderBlock


@tf.keras.saving.register_keras_serializable(package="scratch")
class CausalSelfAttentionBlock(TransformerEncoderBlock):
    """A Transformer block whose positions attend only to themselves and earlier ones (GPT-style).

    Its layers, weights and `call` are those of `TransformerEncoderBlock` under a causal mask (the same
    sub-layer names, so the weights of either load into the other); `step` adds cached decoding.

    Args:
        num_heads, d_ff, dropout, activation, norm, layer_norm_epsilon: as `TransformerEncoderBlock`.
    """

    def __init__(self, num_heads: int, d_ff: int, **kwargs):
        super().__init__(num_heads, d_ff, causal=True, **kwargs)

    def step(
        self, x: tf.Tensor, position: tf.Tensor | int, cache: tuple[tf.Tensor, tf.Tensor]
    ) -> tuple[tf.Tensor, tuple[tf.Tensor, tf.Tensor]]:
        """The block on Tq consecutive positions from `position` on, in inference mode.

        Args:
            x: (B, Tq, C) the positions' inputs.
            position: int scalar, or (B,) one per row: the slot of the first of them.
            cache: keys and values of the earlier positions, two (B, H, Tmax, D).

        Returns:
            (B, Tq, C) outputs and the cache with these positions' keys and values written in.
        """
        keep = cache_mask(position, tf.shape(x)[1], tf.shape(cache[0])[2])  # (1 or B, Tq, Tmax)

        def self_attend(query):
            return self.attention(query, query, attention_mask=keep, cache=cache, cache_update_index=position)

        return self._sublayers(x, self_attend, training=False)

    def get_config(self):
        config = super().get_config()
        del config["causal"]
        return config
