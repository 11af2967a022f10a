"""The decoder-only block: the layer contract, the encoder block's weights under a causal mask, cached steps."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from scratch.encoder import TransformerEncoderBlock
from scratch.translation.causal_block import CausalSelfAttentionBlock
from tests.scratch.layer_checks import check_layer

B, T, C, H, F = 2, 6, 8, 2, 16
X = np.random.default_rng(4).normal(size=(B, T, C)).astype(np.float32)
WEIGHTS = 4 * (C * C + C) + 2 * 2 * C + (C * F + F) + (F * C + C)


def test_layer_contract():
    block = check_layer(CausalSelfAttentionBlock, {"num_heads": H, "d_ff": F, "norm": "pre"}, X, (B, T, C), WEIGHTS)
    assert "causal" not in block.get_config()


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_it_is_the_encoder_block_under_a_causal_mask_with_the_same_weights(norm):
    causal = CausalSelfAttentionBlock(H, F, norm=norm, activation="relu")
    encoder = TransformerEncoderBlock(H, F, norm=norm, activation="relu", causal=True)
    causal(X), encoder(X)
    encoder.set_weights(causal.get_weights())
    assert [w.shape for w in causal.weights] == [w.shape for w in encoder.weights]
    np.testing.assert_allclose(causal(X), encoder(X), atol=1e-6)


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_cached_steps_give_the_causal_outputs_and_rows_may_stand_at_different_positions(norm):
    block = CausalSelfAttentionBlock(H, F, norm=norm)
    expected = block(X).numpy()
    empty = tf.zeros([B, H, T + 2, C // H])
    out, cache = block.step(X[:, :3], 0, (empty, empty))  # three positions in one pass
    np.testing.assert_allclose(out, expected[:, :3], atol=1e-5)
    for t in range(3, T):
        out, cache = block.step(X[:, t : t + 1], tf.constant(t), cache)
        np.testing.assert_allclose(out[:, 0], expected[:, t], atol=1e-5)
    # row 0 fed up to position 2, row 1 up to 4: each then steps on at its own next position
    _, cache = block.step(X[:, :5], 0, (empty, empty))
    positions = tf.constant([3, 5])
    out, _ = block.step(tf.stack([X[0, 3:4], X[1, 5:6]]), positions, cache)
    np.testing.assert_allclose(out[:, 0], [expected[0, 3], expected[1, 5]], atol=1e-5)
