import math

import numpy as np
import pytest

from scratch.embedding import TokenAndPositionEmbedding, segment_ids
from scratch.positional_encoding import sinusoid
from tests.scratch.layer_checks import check_layer

IDS = np.array([[5, 3, 9, 0, 0], [1, 2, 3, 4, 6]], np.int64)


def test_layer_contract():
    check_layer(TokenAndPositionEmbedding, {"vocab_size": 10, "d_model": 8}, IDS, (2, 5, 8), expected_weights=80)


def test_scaled_token_vectors_plus_sinusoids_and_padding_mask():
    layer = TokenAndPositionEmbedding(vocab_size=10, d_model=8, dropout=0.5)
    out = layer(IDS, training=False).numpy()  # dropout is off at inference
    table = layer.token_embedding.embeddings.numpy()
    expected = table[IDS] * math.sqrt(8) + sinusoid(5, 8).numpy()[None]
    np.testing.assert_allclose(out, expected, atol=1e-5)
    np.testing.assert_array_equal(layer.compute_mask(IDS), IDS != 0)


@pytest.mark.slow
def test_minilm_vectors_are_the_checkpoint_s_principal_components_at_the_initialiser_s_scale():
    from safetensors.numpy import load_file
    from sklearn.decomposition import PCA

    from core.pretrained import packaged_minilm
    from scratch.embedding import minilm_vectors

    checkpoint = load_file(packaged_minilm() / "model.safetensors")["embeddings.word_embeddings.weight"]
    vocabulary = (packaged_minilm() / "vocab.txt").read_text(encoding="utf-8").splitlines()
    vectors, _ = minilm_vectors(32)
    assert vectors.shape == (len(vocabulary), 32) and vectors.dtype == np.float32
    assert math.isclose(vectors.std(), 32**-0.5, rel_tol=1e-4)  # as the random initialiser's
    reference = PCA(n_components=32, svd_solver="full").fit_transform(checkpoint)  # (V, 32), signs arbitrary
    scale = vectors.std() / reference.std()
    np.testing.assert_allclose(np.abs(vectors), np.abs(reference) * scale, atol=2e-4)


PAIR_IDS = np.array([[5, 3, 2, 9, 0], [2, 4, 4, 6, 7], [8, 8, 8, 8, 2]], np.int64)  # 2 separates the texts


def test_pair_layer_contract():
    check_layer(
        TokenAndPositionEmbedding,
        {"vocab_size": 10, "d_model": 8, "separator_id": 2},
        PAIR_IDS,
        (3, 5, 8),
        expected_weights=80 + 2 * 8,
    )


def test_a_pair_adds_each_token_s_segment_vector_before_scaling():
    layer = TokenAndPositionEmbedding(vocab_size=10, d_model=8, separator_id=2)
    out = layer(PAIR_IDS).numpy()
    segments = np.array([[0, 0, 0, 1, 1], [0, 1, 1, 1, 1], [0, 0, 0, 0, 0]])  # the separator is the first text's
    tokens, segment_table = layer.token_embedding.embeddings.numpy(), layer.segment_embedding.embeddings.numpy()
    expected = (tokens[PAIR_IDS] + segment_table[segments]) * math.sqrt(8) + sinusoid(5, 8).numpy()[None]
    np.testing.assert_allclose(out, expected, atol=1e-5)
    np.testing.assert_array_equal(segment_ids(PAIR_IDS, 2).numpy(), segments)


@pytest.mark.slow
def test_minilm_segment_vectors_are_the_token_types_through_the_token_vectors_projection():
    from safetensors.numpy import load_file

    from core.pretrained import packaged_minilm
    from scratch.embedding import minilm_vectors

    checkpoint = load_file(packaged_minilm() / "model.safetensors")
    words = checkpoint["embeddings.word_embeddings.weight"].astype(np.float64)  # (V, 384)
    types = checkpoint["embeddings.token_type_embeddings.weight"].astype(np.float64)  # (2, 384)
    tokens, segments = minilm_vectors(16)
    assert segments.shape == (2, 16) and segments.dtype == np.float32
    # the token vectors are an affine map of the checkpoint's, tokens = words @ A + b: found by least squares
    affine, *_ = np.linalg.lstsq(np.c_[words, np.ones(len(words))], tokens, rcond=None)  # (385, 16)
    np.testing.assert_allclose(np.c_[words, np.ones(len(words))] @ affine, tokens, atol=1e-4)
    # BERT adds a token type to a token vector: its projection is the linear part of that map
    np.testing.assert_allclose(segments, types @ affine[:-1], atol=1e-4)
