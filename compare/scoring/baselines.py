"""Reference rows on the same splits, one pair per kind of task: a constant answer, and a TF-IDF linear model.

Single label: the majority class, TF-IDF + logistic regression. Multi-label: no label at all, TF-IDF + one
logistic regression per label. Regression: the train mean, TF-IDF + ridge, and for a pair task the cosine
similarity of the two texts' TF-IDF vectors. For a pair task the linear models read both texts (`tfidf_features`).
They show how much either Transformer adds over a model that needs no neural network at all; a kind's
`reference_rows` (`core.kinds`) gives its rows, named in the report by `compare.scoring.wording.REFERENCE_NAMES`.
"""

from __future__ import annotations

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression, Ridge

from compare.scoring.scores import quick_scores
from core.multilabel import choose_thresholds, multilabel_scores
from core.multilabel import predict as predict_labels
from core.regression import regression_scores

Split = tuple[list[str], list[str] | None, np.ndarray]  # texts, second texts (None without pairs), gold


def majority_class(train_gold: np.ndarray, test_gold: np.ndarray, num_classes: int) -> dict:
    """Always predicts the most frequent training class."""
    majority = int(np.bincount(train_gold, minlength=num_classes).argmax())
    return quick_scores(np.full(len(test_gold), majority), test_gold, num_classes)


def tfidf_logreg(train: Split, test: Split, num_classes: int, seed: int = 0) -> dict:
    """Word uni- and bigram TF-IDF features (`tfidf_features`) into an L2-regularised logistic regression."""
    vectorise, train_x = tfidf_features(train[0], train[0], train[1], train[1])
    model = LogisticRegression(C=4.0, max_iter=2000, random_state=seed).fit(train_x, train[2])
    return quick_scores(model.predict(vectorise(test[0], test[1])), test[2], num_classes)


def tfidf_features(train_texts: list[str], texts: list[str], pairs: list[str] | None = None, train_pairs=None):
    """Word uni- and bigram TF-IDF of `texts`, fitted on the train texts (and their pairs). For a pair task the
    two texts' vectors and their element-wise product (the words they share) stand side by side, so a linear
    model sees each text and their overlap. Returns (vectorise, features) where `vectorise(texts, pairs)` maps
    other rows the same way."""
    from scipy.sparse import hstack

    vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=1, lowercase=True)
    vectorizer.fit(train_texts + (train_pairs or []))

    def vectorise(rows: list[str], row_pairs: list[str] | None = None):
        first = vectorizer.transform(rows)
        if row_pairs is None:
            return first
        second = vectorizer.transform(row_pairs)
        return hstack([first, second, first.multiply(second)]).tocsr()

    return vectorise, vectorise(texts, pairs)


def no_labels(test_gold: np.ndarray) -> dict:
    """Multi-label reference: predicts no label for any text (the most frequent answer when labels are rare)."""
    return multilabel_scores(test_gold, np.zeros_like(test_gold))


def tfidf_one_vs_rest(
    train: tuple[list[str], list[str] | None, np.ndarray],
    validation: tuple[list[str], list[str] | None, np.ndarray],
    test: tuple[list[str], list[str] | None, np.ndarray],
    seed: int = 0,
) -> dict:
    """Multi-label reference: one logistic regression per label on TF-IDF features, each label's threshold chosen
    on validation as the Transformers' are (`core.multilabel`). Each split is (texts, pairs or None, gold (n, K))."""
    vectorise, train_x = tfidf_features(train[0], train[0], train[1], train[1])
    features = {"validation": vectorise(validation[0], validation[1]), "test": vectorise(test[0], test[1])}
    probs = {name: np.zeros((x.shape[0], train[2].shape[1])) for name, x in features.items()}  # (n, K) each
    for k in range(train[2].shape[1]):
        if train[2][:, k].min() == train[2][:, k].max():  # a label always (or never) present in train
            for name in probs:
                probs[name][:, k] = float(train[2][0, k])
            continue
        model = LogisticRegression(C=4.0, max_iter=2000, random_state=seed).fit(train_x, train[2][:, k])
        for name, x in features.items():
            probs[name][:, k] = model.predict_proba(x)[:, 1]
    thresholds = choose_thresholds(probs["validation"], validation[2])
    return multilabel_scores(test[2], predict_labels(probs["test"], thresholds))


def train_mean(train_values: np.ndarray, test_values: np.ndarray) -> dict:
    """Regression reference: predicts the mean training value for every text (no correlation, the floor of MSE)."""
    return regression_scores(test_values, np.full(len(test_values), float(np.mean(train_values))))


def tfidf_ridge(
    train: tuple[list[str], list[str] | None, np.ndarray], test: tuple[list[str], list[str] | None, np.ndarray]
) -> dict:
    """Regression reference: ridge regression on TF-IDF features. Each split is (texts, pairs or None, values)."""
    vectorise, train_x = tfidf_features(train[0], train[0], train[1], train[1])
    model = Ridge(alpha=1.0).fit(train_x, train[2])
    return regression_scores(test[2], model.predict(vectorise(test[0], test[1])))


def tfidf_cosine(train: tuple[list[str], list[str], np.ndarray], test: tuple[list[str], list[str], np.ndarray]) -> dict:
    """Pair regression reference: the cosine similarity of the two texts' TF-IDF vectors, mapped onto the label's
    scale by a line fitted on train (the correlations are the cosine's own; MSE and MAE are on the label's scale)."""
    vectorizer = TfidfVectorizer(ngram_range=(1, 1), sublinear_tf=True, lowercase=True).fit(train[0] + train[1])

    def cosine(texts: list[str], pairs: list[str]) -> np.ndarray:
        a, b = vectorizer.transform(texts), vectorizer.transform(pairs)  # rows are L2-normalised
        return np.asarray(a.multiply(b).sum(axis=1)).ravel()

    slope, intercept = np.polyfit(cosine(train[0], train[1]), train[2], 1)
    return regression_scores(test[2], slope * cosine(test[0], test[1]) + intercept)
