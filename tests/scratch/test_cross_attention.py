"""scratch.cross_attention: the soft alignment against NumPy, padding masked, the layer's config and training."""

import numpy as np
import pytest
import tensorflow as tf

from scratch.cross_attention import CrossAttention, aligned


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_alignment_averages_the_real_tokens_of_the_other_text_only():
    rng = np.random.default_rng(0)
    scores, values = rng.normal(size=(1, 2, 3)).astype(np.float32), rng.normal(size=(1, 3, 4)).astype(np.float32)
    mask = np.array([[True, True, False]])
    expected = softmax(scores[0][:, :2]) @ values[0][:2]  # the padding key left out altogether
    np.testing.assert_allclose(aligned(scores, values, mask).numpy()[0], expected, rtol=1e-5, atol=1e-6)


def test_a_text_with_no_real_token_aligns_to_nothing_however_much_padding():
    scores = np.ones((1, 2, 3), np.float32)
    values = np.arange(12, dtype=np.float32).reshape(1, 3, 4)
    np.testing.assert_array_equal(aligned(scores, values, np.zeros((1, 3), bool)).numpy(), np.zeros((1, 2, 4)))


def pair(rng: np.random.Generator, t1: int, t2: int, width: int = 8) -> tuple[list, list]:
    a, b = rng.normal(size=(1, t1, width)).astype(np.float32), rng.normal(size=(1, t2, width)).astype(np.float32)
    return [a, b], [np.ones((1, t1), bool), np.ones((1, t2), bool)]


def test_padding_either_text_changes_nothing_at_the_real_tokens():
    rng = np.random.default_rng(1)
    layer = CrossAttention(activation="relu")
    (a, b), masks = pair(rng, 3, 2)
    alone = layer([a, b], mask=masks)
    padded_b = np.concatenate([b, rng.normal(size=(1, 4, 8)).astype(np.float32)], axis=1)  # junk under the mask
    padded_mask = np.concatenate([masks[1], np.zeros((1, 4), bool)], axis=1)
    together = layer([a, padded_b], mask=[masks[0], padded_mask])
    np.testing.assert_allclose(together[0].numpy(), alone[0].numpy(), atol=1e-6)
    np.testing.assert_allclose(together[1].numpy()[:, :2], alone[1].numpy(), atol=1e-6)


def test_the_layer_against_numpy_and_the_same_dense_for_both_texts():
    rng = np.random.default_rng(2)
    layer = CrossAttention(activation="linear")
    (a, b), masks = pair(rng, 3, 2)
    out_a, out_b = layer([a, b], mask=masks)
    kernel, bias = layer.compare.get_weights()
    scores = a[0] @ b[0].T / np.sqrt(8)  # (3, 2)
    a_tilde, b_tilde = softmax(scores) @ b[0], softmax(scores.T) @ a[0]
    for x, x_tilde, out in ((a[0], a_tilde, out_a), (b[0], b_tilde, out_b)):
        expected = np.concatenate([x, x_tilde, x - x_tilde, x * x_tilde], axis=-1) @ kernel + bias
        np.testing.assert_allclose(out.numpy()[0], expected, rtol=1e-4, atol=1e-5)
    swapped_b, swapped_a = layer([b, a], mask=masks[::-1])  # the order of the texts does not matter
    np.testing.assert_allclose(swapped_a.numpy(), out_a.numpy(), atol=1e-6)
    np.testing.assert_allclose(swapped_b.numpy(), out_b.numpy(), atol=1e-6)


def test_config_round_trip_weights_and_dropout_only_in_training():
    rng = np.random.default_rng(3)
    layer = CrossAttention(activation="gelu", dropout=0.5, name="cross_attention")
    inputs, masks = pair(rng, 3, 2)
    outputs = layer(inputs, mask=masks, training=False)
    clone = CrossAttention.from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()
    clone(inputs, mask=masks)
    clone.set_weights(layer.get_weights())
    np.testing.assert_allclose(clone(inputs, mask=masks)[0].numpy(), outputs[0].numpy(), atol=1e-6)
    assert sum(int(np.prod(w.shape)) for w in layer.trainable_weights) == 4 * 8 * 8 + 8
    assert tf.keras.saving.serialize_keras_object(layer)["registered_name"] == "scratch>CrossAttention"
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(layer(inputs, mask=masks, training=True)[0].numpy(), outputs[0].numpy())
