"""Reference rows on the same splits: the majority class, and TF-IDF + logistic regression.

They show how much either Transformer adds over a model that needs no neural network at all.
"""

from __future__ import annotations

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

from compare.scoring.scores import quick_scores


def majority_class(train_gold: np.ndarray, test_gold: np.ndarray, num_classes: int) -> dict:
    """Always predicts the most frequent training class."""
    majority = int(np.bincount(train_gold, minlength=num_classes).argmax())
    return quick_scores(np.full(len(test_gold), majority), test_gold, num_classes)


def tfidf_logreg(
    train_texts: list[str],
    train_gold: np.ndarray,
    test_texts: list[str],
    test_gold: np.ndarray,
    num_classes: int,
    seed: int = 0,
) -> dict:
    """Word uni- and bigram TF-IDF features into an L2-regularised logistic regression."""
    model = make_pipeline(
        TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=1, lowercase=True),
        LogisticRegression(C=4.0, max_iter=2000, random_state=seed),
    )
    model.fit(train_texts, train_gold)
    return quick_scores(model.predict(test_texts), test_gold, num_classes)
