import numpy as np

from scratch.pooling import LastTokenPooling, MaskedMeanPooling
from tests.scratch.layer_checks import check_layer

X = np.random.default_rng(1).normal(size=(3, 4, 6)).astype(np.float32)
MASK = np.array([[1, 1, 0, 0], [1, 1, 1, 1], [1, 0, 0, 0]], bool)


def test_layer_contracts():
    check_layer(MaskedMeanPooling, {}, X, (3, 6), expected_weights=0)
    check_layer(LastTokenPooling, {}, X, (3, 6), expected_weights=0)


def test_mean_counts_real_tokens_only():
    pooled = MaskedMeanPooling()(X, padding_mask=MASK).numpy()
    for row, real in enumerate(MASK.sum(1)):
        np.testing.assert_allclose(pooled[row], X[row, :real].mean(0), atol=1e-6)
    np.testing.assert_allclose(MaskedMeanPooling()(X).numpy(), X.mean(1), atol=1e-6)


def test_mean_of_a_fully_padded_row_is_zero_not_nan():
    pooled = MaskedMeanPooling()(X, padding_mask=np.zeros_like(MASK)).numpy()
    np.testing.assert_array_equal(pooled, 0.0)


def test_last_token_is_the_last_real_one():
    pooled = LastTokenPooling()(X, padding_mask=MASK).numpy()
    np.testing.assert_array_equal(pooled, X[[0, 1, 2], [1, 3, 0]])
    np.testing.assert_array_equal(LastTokenPooling()(X).numpy(), X[:, -1])
