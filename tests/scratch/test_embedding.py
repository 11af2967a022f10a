import math

import numpy as np

from scratch.embedding import TokenAndPositionEmbedding
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
