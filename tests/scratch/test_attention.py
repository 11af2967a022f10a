import numpy as np
import pytest
import tensorflow as tf

from scratch.attention import MultiHeadAttention, cache_mask, write_slots
from tests.scratch.layer_checks import check_layer

RNG = np.random.default_rng(0)
X = RNG.normal(size=(2, 5, 8)).astype(np.float32)
PADDING = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)


def reference(layer: MultiHeadAttention, x: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The same computation in NumPy from the layer's weights: an independent check of the TensorFlow code."""
    heads, d = layer.num_heads, x.shape[-1] // layer.num_heads

    def project(dense):
        kernel, bias = dense.get_weights()
        return (x @ kernel + bias).reshape(x.shape[0], x.shape[1], heads, d).transpose(0, 2, 1, 3)

    q, k, v = project(layer.query_dense), project(layer.key_dense), project(layer.value_dense)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d)
    scores = np.where(keep[:, None], scores, -np.inf)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    context = (weights @ v).transpose(0, 2, 1, 3).reshape(x.shape)
    kernel, bias = layer.output_dense.get_weights()
    return context @ kernel + bias, weights


def test_layer_contract():
    # four projections of 8x8 plus bias
    check_layer(
        MultiHeadAttention, {"num_heads": 2}, X, (2, 5, 8), expected_weights=4 * (64 + 8), call_kwargs={"value": X}
    )


def test_matches_a_numpy_reference_with_padding_mask():
    layer = MultiHeadAttention(num_heads=2)
    keep = np.broadcast_to(PADDING[:, None, :], (2, 5, 5))
    out, weights = layer(X, X, attention_mask=keep, return_attention_scores=True)
    expected_out, expected_weights = reference(layer, X, keep)
    np.testing.assert_allclose(weights, expected_weights, atol=1e-5)
    np.testing.assert_allclose(out, expected_out, atol=1e-5)


def test_padded_keys_get_zero_weight_and_rows_sum_to_one():
    layer = MultiHeadAttention(num_heads=4, dropout=0.5)
    _, weights = layer(X, X, attention_mask=PADDING[:, None, :], return_attention_scores=True, training=False)
    weights = weights.numpy()  # (B, H, T, T)
    assert weights.shape == (2, 4, 5, 5)
    assert np.all(weights[0, :, :, 3:] == 0.0)
    assert np.all(weights[0, :, :, :3] > 0.0)
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-6)


def test_padded_keys_do_not_change_the_outputs_of_real_queries():
    layer = MultiHeadAttention(num_heads=2)
    short = layer(X[:1, :3], X[:1, :3]).numpy()
    padded = layer(X[:1], X[:1], attention_mask=PADDING[:1, None, :]).numpy()
    np.testing.assert_allclose(padded[:, :3], short, atol=1e-5)


def test_cross_attention_uses_value_length():
    layer = MultiHeadAttention(num_heads=2)
    out, weights = layer(X[:, :2], X, return_attention_scores=True)
    assert out.shape == (2, 2, 8) and weights.shape == (2, 2, 2, 5)


def test_width_not_divisible_by_heads_is_refused():
    with pytest.raises(ValueError, match="d_model 8 is not divisible by num_heads 3"):
        MultiHeadAttention(num_heads=3)(tf.zeros([1, 2, 8]), tf.zeros([1, 2, 8]))


def test_positions_written_into_a_cache_one_by_one_attend_as_the_causal_call_does():
    layer = MultiHeadAttention(num_heads=2)
    causal = np.tril(np.ones([5, 5], bool))[None]
    expected, expected_weights = layer(X, X, attention_mask=causal, return_attention_scores=True)
    empty = tf.zeros([2, 2, 7, 4])  # two slots more than the positions: they stay unwritten and unseen
    cache = (empty, empty)
    for t in range(5):
        keep = cache_mask(t, 1, 7)  # (1, 1, 7): slots 0 .. t
        out, weights, cache = layer(
            X[:, t : t + 1], X[:, t : t + 1], attention_mask=keep, cache=cache, cache_update_index=t,
            return_attention_scores=True,
        )  # fmt: skip
        np.testing.assert_allclose(out[:, 0], expected[:, t], atol=1e-5)
        np.testing.assert_allclose(weights[:, :, 0, :5], expected_weights[:, :, t], atol=1e-6)
        np.testing.assert_array_equal(weights.numpy()[:, :, 0, t + 1 :], 0.0)
    keys, values = layer.key_value_cache(tf.constant(X))
    np.testing.assert_allclose(cache[0][:, :, :5], keys, atol=1e-6)
    np.testing.assert_allclose(cache[1][:, :, :5], values, atol=1e-6)
    np.testing.assert_array_equal(cache[0].numpy()[:, :, 5:], 0.0)


def test_a_static_cache_gives_the_cross_attention_of_its_value_without_reading_it_again():
    layer = MultiHeadAttention(num_heads=2)
    expected = layer(X[:, :2], X, attention_mask=PADDING[:, None, :])
    cache = layer.key_value_cache(tf.constant(X))
    out, returned = layer(X[:, :2], None, attention_mask=PADDING[:, None, :], cache=cache)
    np.testing.assert_allclose(out, expected, atol=1e-6)
    assert returned is cache


def test_a_cache_is_written_at_each_rows_own_slots_and_nowhere_else():
    cache = tf.zeros([2, 2, 6, 1])
    update = tf.constant([[1.0, 2.0], [3.0, 4.0]])[:, None, :, None] * tf.constant([1.0, 10.0])[None, :, None, None]
    written = write_slots(cache, update, tf.constant([1, 3]))[..., 0].numpy()  # (B=2, H=2, Tmax=6)
    np.testing.assert_array_equal(written[:, 0], [[0, 1, 2, 0, 0, 0], [0, 0, 0, 3, 4, 0]])
    np.testing.assert_array_equal(written[:, 1], [[0, 10, 20, 0, 0, 0], [0, 0, 0, 30, 40, 0]])  # every head
    np.testing.assert_array_equal(cache_mask(tf.constant([1, 3]), 2, 6).numpy(), [
        [[1, 1, 0, 0, 0, 0], [1, 1, 1, 0, 0, 0]], [[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 0]],
    ])  # fmt: skip


def test_an_update_index_without_a_cache_is_refused():
    with pytest.raises(ValueError, match="cache_update_index needs a cache to write into"):
        MultiHeadAttention(num_heads=2)(X, X, cache_update_index=0)
