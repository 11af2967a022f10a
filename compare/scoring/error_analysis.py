"""Where the models go wrong: the examples they disagree on and each model's most confident mistakes."""

from __future__ import annotations

import numpy as np


def disagreements(
    texts: list[str], gold: np.ndarray, probs: dict[str, np.ndarray], labels: list[str], limit: int
) -> list[dict]:
    """Examples where the models' predicted labels are not all the same, most confidently contested first.

    Each row: text, gold label, and per model its label and the probability it gave that label. Rows are
    ordered by the largest probability any model put on a label the others did not choose.
    """
    names = list(probs)
    preds = np.stack([probs[n].argmax(axis=1) for n in names])  # (M, n)
    confidence = np.stack([probs[n].max(axis=1) for n in names])  # (M, n)
    contested = np.flatnonzero((preds != preds[0]).any(axis=0))
    order = contested[np.argsort(-confidence[:, contested].max(axis=0), kind="stable")]
    return [_row(i, texts, gold, probs, labels) for i in order[:limit]]


def count_disagreements(probs: dict[str, np.ndarray]) -> int:
    preds = np.stack([p.argmax(axis=1) for p in probs.values()])
    return int((preds != preds[0]).any(axis=0).sum())


def confident_mistakes(
    texts: list[str], gold: np.ndarray, probs: dict[str, np.ndarray], name: str, labels: list[str], limit: int
) -> list[dict]:
    """One model's wrong predictions, most confident first, with every model's view of each example."""
    own = probs[name]
    wrong = np.flatnonzero(own.argmax(axis=1) != gold)
    order = wrong[np.argsort(-own[wrong].max(axis=1), kind="stable")]
    return [_row(i, texts, gold, probs, labels) for i in order[:limit]]


def _row(i: int, texts: list[str], gold: np.ndarray, probs: dict[str, np.ndarray], labels: list[str]) -> dict:
    return {
        "index": int(i),
        "text": texts[i],
        "gold": labels[gold[i]],
        "models": {
            name: {"label": labels[int(p[i].argmax())], "probability": float(p[i].max())} for name, p in probs.items()
        },
    }
