"""`TransformerBlock`: what every Transformer block of the suite (encoder, decoder, causal) is configured by."""

from __future__ import annotations

import tensorflow as tf

from scratch.config import check_block_options


class TransformerBlock(tf.keras.layers.Layer):
    """The options every block shares, one attribute each, checked once and round-tripped through `get_config`;
    a block subclasses it with its sub-layers (`build`) and its `call`.

    Args:
        num_heads: attention heads; the input width must be divisible by it.
        d_ff: width of the feed-forward hidden layer.
        dropout: dropout rate after each sub-layer and inside the feed-forward network.
        activation: `gelu` or `relu` in the feed-forward network.
        norm: `post` normalises after each residual sum (the original paper); `pre` normalises each sub-layer's
            input and leaves the residual stream untouched (stack a final LayerNorm after the last block).
        layer_norm_epsilon: epsilon of the LayerNorms.
    """

    def __init__(
        self,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        activation: str = "gelu",
        norm: str = "post",
        layer_norm_epsilon: float = 1e-5,
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_block_options(norm, activation)
        self.num_heads = num_heads
        self.d_ff = d_ff
        self.dropout = dropout
        self.activation = activation
        self.norm = norm
        self.layer_norm_epsilon = layer_norm_epsilon
        self.supports_masking = True

    def get_config(self):
        return {
            **super().get_config(),
            "num_heads": self.num_heads,
            "d_ff": self.d_ff,
            "dropout": self.dropout,
            "activation": self.activation,
            "norm": self.norm,
            "layer_norm_epsilon": self.layer_norm_epsilon,
        }
