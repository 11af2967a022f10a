import numpy as np
import pytest

from scratch.encoder import TransformerEncoderBlock, attention_mask
from tests.scratch.layer_checks import check_layer

RNG = np.random.default_rng(2)
X = RNG.normal(size=(2, 6, 8)).astype(np.float32)
PADDING = np.array([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]], bool)
# attention 4 x (8x8 + 8), two LayerNorms 2 x 16, feed-forward 8x16 + 16 + 16x8 + 8
WEIGHTS = 4 * 72 + 2 * 16 + (8 * 16 + 16) + (16 * 8 + 8)


@pytest.mark.parametrize(("norm", "causal"), [("post", False), ("pre", True)])
def test_layer_contract(norm, causal):
    kwargs = {"num_heads": 2, "d_ff": 16, "norm": norm, "causal": causal, "activation": "relu"}
    check_layer(TransformerEncoderBlock, kwargs, X, (2, 6, 8), WEIGHTS, call_kwargs={"padding_mask": PADDING})


def _layer_norm(x, norm):
    mean, variance = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + norm.epsilon) * norm.gamma.numpy() + norm.beta.numpy()


def _feed_forward(x, block):
    hidden = np.maximum(x @ block.ff_inner.kernel.numpy() + block.ff_inner.bias.numpy(), 0.0)  # relu
    return hidden @ block.ff_output.kernel.numpy() + block.ff_output.bias.numpy()


def _block_with_uneven_norms(norm):
    """A relu block without dropout whose LayerNorms scale and shift each channel differently, so that where a
    norm sits (and which of the two) shows in the output."""
    block = TransformerEncoderBlock(num_heads=2, d_ff=16, norm=norm, activation="relu", dropout=0.0)
    block(X)
    rng = np.random.default_rng(3)
    for layer in (block.attention_norm, block.ff_norm):
        layer.gamma.assign(rng.uniform(0.5, 2.0, 8).astype(np.float32))
        layer.beta.assign(rng.normal(size=8).astype(np.float32))
    return block


def test_a_pre_ln_block_normalises_each_sublayers_input_and_leaves_the_residual_stream_alone():
    block = _block_with_uneven_norms("pre")
    normed = _layer_norm(X, block.attention_norm)
    attended = X + block.attention(normed, normed).numpy()
    expected = attended + _feed_forward(_layer_norm(attended, block.ff_norm), block)
    np.testing.assert_allclose(block(X).numpy(), expected, atol=1e-5)


def test_a_post_ln_block_normalises_each_residual_sum():
    block = _block_with_uneven_norms("post")
    attended = _layer_norm(X + block.attention(X, X).numpy(), block.attention_norm)
    expected = _layer_norm(attended + _feed_forward(attended, block), block.ff_norm)
    np.testing.assert_allclose(block(X).numpy(), expected, atol=1e-5)


def test_pre_and_post_ln_blocks_with_the_same_weights_differ():
    post, pre = _block_with_uneven_norms("post"), _block_with_uneven_norms("pre")
    pre.set_weights(post.get_weights())
    assert np.abs(pre(X).numpy() - post(X).numpy()).mean() > 0.1


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_padding_does_not_change_the_real_positions(norm):
    block = TransformerEncoderBlock(num_heads=2, d_ff=16, norm=norm)
    padded = block(X, padding_mask=PADDING).numpy()
    alone = block(X[:1, :4]).numpy()
    np.testing.assert_allclose(padded[:1, :4], alone, atol=1e-5)


def test_causal_block_ignores_later_tokens():
    block = TransformerEncoderBlock(num_heads=2, d_ff=16, causal=True)
    changed = X.copy()
    changed[:, 3] += 5.0
    before, after = block(X).numpy(), block(changed).numpy()
    np.testing.assert_allclose(after[:, :3], before[:, :3], atol=1e-5)
    assert not np.allclose(after[:, 3:], before[:, 3:], atol=1e-3)
    _, weights = block(X, return_attention_scores=True)
    upper = np.triu(np.ones([6, 6], bool), k=1)
    assert np.all(weights.numpy()[:, :, upper] == 0.0)


def test_a_non_causal_block_does_look_ahead():
    block = TransformerEncoderBlock(num_heads=2, d_ff=16)
    changed = X.copy()
    changed[:, 3] += 5.0
    assert not np.allclose(block(changed).numpy()[:, :3], block(X).numpy()[:, :3], atol=1e-3)


def test_keras_mask_is_used_when_no_padding_mask_is_given():
    block = TransformerEncoderBlock(num_heads=2, d_ff=16)
    np.testing.assert_allclose(block(X, mask=PADDING).numpy(), block(X, padding_mask=PADDING).numpy(), atol=1e-6)
    assert block.compute_mask(X, PADDING) is PADDING


def test_combined_mask_is_padding_and_triangle():
    mask = attention_mask(PADDING, 6, causal=True).numpy()  # (B, T, T)
    expected = np.tril(np.ones([6, 6], bool))[None] & PADDING[:, None, :]
    np.testing.assert_array_equal(mask, expected)


@pytest.mark.parametrize(
    ("kwargs", "message"), [({"norm": "middle"}, "norm must be"), ({"activation": "tanh"}, "activation")]
)
def test_bad_options_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TransformerEncoderBlock(num_heads=2, d_ff=16, **kwargs)
