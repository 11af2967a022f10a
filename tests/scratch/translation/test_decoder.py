"""The decoder block: config round trip, causality, source padding, the key/value-cached step."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from scratch.translation.decoder import TransformerDecoderBlock
from tests.scratch.layer_checks import check_layer

B, TT, TS, C, H, F = 2, 5, 6, 16, 4, 32


def _inputs(seed: int = 0):
    rng = np.random.default_rng(seed)
    target = rng.normal(size=[B, TT, C]).astype(np.float32)
    memory = rng.normal(size=[B, TS, C]).astype(np.float32)
    return target, memory


def _weights_count() -> int:
    attention = 4 * (C * C + C)
    return 2 * attention + 3 * 2 * C + (C * F + F) + (F * C + C)


@pytest.mark.parametrize("norm", [pytest.param("post", marks=pytest.mark.slow), "pre"])
def test_round_trips_its_config_and_trains(norm):
    target, memory = _inputs()
    check_layer(
        TransformerDecoderBlock,
        {"num_heads": H, "d_ff": F, "norm": norm, "dropout": 0.1, "activation": "gelu"},
        target,
        expected_shape=(B, TT, C),
        expected_weights=_weights_count(),
        call_kwargs={"memory": tf.constant(memory)},
    )


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_changing_a_later_target_position_leaves_earlier_outputs_unchanged(norm):
    block = TransformerDecoderBlock(H, F, norm=norm)
    target, memory = _inputs()
    before = block(target, memory).numpy()
    changed = target.copy()
    changed[:, 3:] = np.random.default_rng(1).normal(size=changed[:, 3:].shape)
    after = block(changed, memory).numpy()
    np.testing.assert_allclose(after[:, :3], before[:, :3], atol=1e-6)
    assert not np.allclose(after[:, 3:], before[:, 3:], atol=1e-3)


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_padding_the_source_leaves_the_outputs_unchanged(norm):
    block = TransformerDecoderBlock(H, F, norm=norm)
    target, memory = _inputs()
    mask = np.ones([B, TS], bool)
    before, weights = block(target, memory, memory_mask=mask, return_attention_scores=True)
    padded = np.concatenate([memory, np.random.default_rng(2).normal(size=[B, 3, C]).astype(np.float32)], axis=1)
    padded_mask = np.concatenate([mask, np.zeros([B, 3], bool)], axis=1)
    after, padded_weights = block(target, padded, memory_mask=padded_mask, return_attention_scores=True)
    np.testing.assert_allclose(after, before, atol=1e-5)
    np.testing.assert_array_equal(padded_weights.numpy()[..., TS:], 0.0)
    np.testing.assert_allclose(padded_weights.numpy()[..., :TS], weights.numpy(), atol=1e-6)


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_cached_steps_give_the_teacher_forced_outputs(norm):
    block = TransformerDecoderBlock(H, F, norm=norm)
    target, memory = _inputs()
    mask = np.array([[True] * TS, [True] * 3 + [False] * (TS - 3)])
    expected, expected_weights = block(target, memory, memory_mask=mask, return_attention_scores=True)
    empty = tf.zeros([B, H, TT, C // H])
    cache, memory_cache = (empty, empty), block.memory_cache(tf.constant(memory))
    for t in range(TT):
        out, cache, weights = block.step(target[:, t : t + 1], tf.constant(t), cache, memory_cache, mask)
        np.testing.assert_allclose(out[:, 0], expected[:, t], atol=1e-5)
        np.testing.assert_allclose(weights[:, :, 0], expected_weights[:, :, t], atol=1e-6)
    keys, values = block.self_attention.key_value_cache(block.self_norm(target) if norm == "pre" else target)
    np.testing.assert_allclose(cache[0], keys, atol=1e-5)  # the returned cache holds every position's keys
    np.testing.assert_allclose(cache[1], values, atol=1e-5)


def test_rejects_unknown_norm_and_activation():
    with pytest.raises(ValueError, match="norm must be one of post, pre"):
        TransformerDecoderBlock(H, F, norm="sandwich")
    with pytest.raises(ValueError, match="activation must be one of"):
        TransformerDecoderBlock(H, F, activation="tanh")
