import numpy as np
import pytest
from scipy.stats import pearsonr, rankdata, spearmanr

from core.regression import ranks, regression_scores


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_regression_scores_equal_scipy_and_numpy(seed):
    rng = np.random.default_rng(seed)
    gold = np.round(rng.random(50) * 5, 1)  # STS-B's scale, rounded so that ties occur
    pred = np.round(gold + rng.normal(0, 0.8, 50), 1)
    scores = regression_scores(gold, pred)
    assert scores["pearson"] == pytest.approx(pearsonr(gold, pred).statistic)
    assert scores["spearman"] == pytest.approx(spearmanr(gold, pred).statistic)
    assert scores["mse"] == pytest.approx(np.mean((gold - pred) ** 2))
    assert scores["mae"] == pytest.approx(np.mean(np.abs(gold - pred)))


def test_ranks_average_ties_as_scipy():
    values = np.array([3.0, 1.0, 3.0, 2.0, 3.0, 1.0])
    np.testing.assert_allclose(ranks(values), rankdata(values))


def test_a_constant_prediction_has_no_correlation():
    scores = regression_scores(np.array([1.0, 2.0, 3.0]), np.array([2.0, 2.0, 2.0]))
    assert scores["pearson"] == 0.0 and scores["spearman"] == 0.0
    assert scores["mse"] == pytest.approx(2 / 3)
