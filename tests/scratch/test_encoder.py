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
