"""Where the models go wrong: the examples they disagree on and each model's most confident mistakes.

Each kind of task has its own sense of both (`ComparedKind.contested`, `ComparedKind.mistakes`, `ComparedKind.example`). Single label: the predicted classes differ; a mistake is a wrong
class, as confident as the probability given to it. Multi-label: the predicted label sets differ, contested as far
as the models' probabilities of a label lie apart; a mistake is a wrong set, as confident as the probability given
to its most confidently wrong label (p for a label wrongly present, 1 - p for one wrongly absent). Regression: the
models differ by their values' spread, and a mistake is as large as its error.

A row: `index`, `text` (and `text_pair` for a pair task), `gold` (a label, a list of labels or a value) and per
model `label` and `probability` (single label), `label` (a list) and `right` (multi-label), or `value`.
"""

from __future__ import annotations

import numpy as np

from compare.kinds import reported
from compare.scoring.statistics import DEFAULT_KIND
from core.kinds import Kind


def disagreements(
    texts: list[str],
    gold: np.ndarray,
    outputs: dict[str, np.ndarray],
    decisions: dict[str, np.ndarray],
    labels: list[str],
    limit: int,
    kind: Kind = DEFAULT_KIND,
    pairs: list[str] | None = None,
) -> list[dict]:
    """Examples where the models' answers are not all the same, most confidently contested first.

    Single label: ordered by the largest probability any model put on a label the others did not choose.
    Multi-label: by the widest gap between two models' probabilities of one label. Regression: every example,
    by how far apart the models' values are.
    """
    contested, strength = reported(kind).contested(list(outputs.values()), _differ(decisions))
    order = contested[np.argsort(-strength[contested], kind="stable")]
    return [_row(i, texts, pairs, gold, outputs, decisions, labels, kind) for i in order[:limit]]


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
    kind: Kind = DEFAULT_KIND,
    pairs: list[str] | None = None,
) -> list[dict]:
    """One model's wrong answers, most confident (or, for regression, largest) first, with every model's view of
    each example."""
    wrong, strength = reported(kind).mistakes(outputs[name], decisions[name], gold)
    order = wrong[np.argsort(-strength[wrong], kind="stable")]
    return [_row(i, texts, pairs, gold, outputs, decisions, labels, kind) for i in order[:limit]]


def _differ(decisions: dict[str, np.ndarray]) -> np.ndarray:
    """(n,) whether any model decides example i differently from the first."""
    stacked = np.stack(list(decisions.values()))  # (M, n) or (M, n, L)
    differ = stacked != stacked[0]
    return differ.reshape(differ.shape[0], differ.shape[1], -1).any(axis=(0, 2))


def _row(i, texts, pairs, gold, outputs, decisions, labels, kind: Kind) -> dict:
    row = {"index": int(i), "text": texts[i], **({"text_pair": pairs[i]} if pairs is not None else {})}
    own = {name: v[i] for name, v in outputs.items()}
    return {**row, **reported(kind).example(gold[i], own, {name: d[i] for name, d in decisions.items()}, labels)}
