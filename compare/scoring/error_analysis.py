"""Where the models go wrong: the examples they disagree on and each model's most confident mistakes.

Each kind of task has its own sense of both. Single label: the predicted classes differ; a mistake is a wrong
class, as confident as the probability given to it. Multi-label: the predicted label sets differ, contested as far
as the models' probabilities of a label lie apart; a mistake is a wrong set, as confident as the probability given
to its most confidently wrong label (p for a label wrongly present, 1 - p for one wrongly absent). Regression: the
models differ by their values' spread, and a mistake is as large as its error.

A row: `index`, `text` (and `text_pair` for a pair task), `gold` (a label, a list of labels or a value) and per
model `label` and `probability` (single label), `label` (a list) and `right` (multi-label), or `value`.
"""

from __future__ import annotations

import numpy as np

from core.tasks import MULTI_LABEL, REGRESSION, SINGLE_LABEL


def disagreements(
    texts: list[str],
    gold: np.ndarray,
    outputs: dict[str, np.ndarray],
    decisions: dict[str, np.ndarray],
    labels: list[str],
    limit: int,
    problem_type: str = SINGLE_LABEL,
    pairs: list[str] | None = None,
) -> list[dict]:
    """Examples where the models' answers are not all the same, most confidently contested first.

    Single label: ordered by the largest probability any model put on a label the others did not choose.
    Multi-label: by the widest gap between two models' probabilities of one label. Regression: every example,
    by how far apart the models' values are.
    """
    names = list(outputs)
    if problem_type == REGRESSION:
        values = np.stack([outputs[n] for n in names])  # (M, n)
        contested, strength = np.arange(values.shape[1]), values.max(axis=0) - values.min(axis=0)
    elif problem_type == MULTI_LABEL:
        contested = np.flatnonzero(_differ(decisions))
        probs = np.stack([outputs[n] for n in names])  # (M, n, L)
        strength = (probs.max(axis=0) - probs.min(axis=0)).max(axis=1)  # (n,)
    else:
        contested = np.flatnonzero(_differ(decisions))
        strength = np.stack([outputs[n].max(axis=1) for n in names]).max(axis=0)  # (n,)
    order = contested[np.argsort(-strength[contested], kind="stable")]
    return [_row(i, texts, pairs, gold, outputs, decisions, labels, problem_type) for i in order[:limit]]


def count_disagreements(decisions: dict[str, np.ndarray]) -> int:
    """Examples on which the models decide differently (a regression model's values always differ: not counted)."""
    return int(_differ(decisions).sum())


def confident_mistakes(
    texts: list[str],
    gold: np.ndarray,
    outputs: dict[str, np.ndarray],
    decisions: dict[str, np.ndarray],
    name: str,
    labels: list[str],
    limit: int,
    problem_type: str = SINGLE_LABEL,
    pairs: list[str] | None = None,
) -> list[dict]:
    """One model's wrong answers, most confident (or, for regression, largest) first, with every model's view of
    each example."""
    own, decided = outputs[name], decisions[name]
    if problem_type == REGRESSION:
        wrong, strength = np.arange(len(gold)), np.abs(own - gold)
    elif problem_type == MULTI_LABEL:
        errors = decided != gold  # (n, L)
        wrong = np.flatnonzero(errors.any(axis=1))
        sureness = np.where(decided == 1, own, 1 - own)  # the probability behind each decision
        strength = np.where(errors, sureness, 0).max(axis=1)
    else:
        wrong, strength = np.flatnonzero(decided != gold), own.max(axis=1)
    order = wrong[np.argsort(-strength[wrong], kind="stable")]
    return [_row(i, texts, pairs, gold, outputs, decisions, labels, problem_type) for i in order[:limit]]


def _differ(decisions: dict[str, np.ndarray]) -> np.ndarray:
    """(n,) whether any model decides example i differently from the first."""
    stacked = np.stack(list(decisions.values()))  # (M, n) or (M, n, L)
    differ = stacked != stacked[0]
    return differ.reshape(differ.shape[0], differ.shape[1], -1).any(axis=(0, 2))


def _row(i, texts, pairs, gold, outputs, decisions, labels, problem_type) -> dict:
    row = {"index": int(i), "text": texts[i], **({"text_pair": pairs[i]} if pairs is not None else {})}
    if problem_type == REGRESSION:
        row["gold"] = float(gold[i])
        row["models"] = {name: {"value": float(v[i])} for name, v in outputs.items()}
    elif problem_type == MULTI_LABEL:
        row["gold"] = _names(gold[i], labels)
        row["models"] = {
            name: {"label": _names(d[i], labels), "right": bool((d[i] == gold[i]).all())}
            for name, d in decisions.items()
        }
    else:
        row["gold"] = labels[gold[i]]
        row["models"] = {
            name: {"label": labels[int(p[i].argmax())], "probability": float(p[i].max())} for name, p in outputs.items()
        }
    return row


def _names(row: np.ndarray, labels: list[str]) -> list[str]:
    return [labels[k] for k in np.flatnonzero(row)]
