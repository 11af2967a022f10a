"""A model's answer to each input, in the shape `/classify` returns it, for the three kinds of task.

- single label: `{label: probability}`, the classes' probabilities (summing to 1) in label order;
- multi-label: `{"label": [names], "probs": {label: probability}, "thresholds": {label: threshold}}`: each label's
  independent probability, the threshold the run chose for it on validation, and the labels that reach theirs
  (`core.classifier.decide`), as `predictions.jsonl` names `label` and `probs`;
- regression: `{"value": number}`, as `predictions.jsonl` names it.

`decision` is what an answer decides (a class, the chosen labels, the value) and `short` says it, or a gold label,
in a few characters, for the examples.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from core.classifier import decide
from core.tasks import MULTI_LABEL, REGRESSION

NO_LABEL = "(none)"  # a multi-label answer or gold with no label


def answers(model: Any, texts: Sequence[str], text_pairs: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """`model`'s answer to each text (or `(text, text_pair)` pair); raises ValueError when its output is unusable."""
    texts = list(texts)
    pairs = None if text_pairs is None else list(text_pairs)
    if model.problem_type == REGRESSION:
        values = np.asarray(model.predict_values(texts, pairs), dtype=np.float64)
        check_output(values, (len(texts),), "values")
        return [{"value": float(value)} for value in values]
    # a single-text model is asked as before the pair kinds existed: with the texts alone
    probs = model.predict_proba(texts) if pairs is None else model.predict_proba(texts, pairs)
    probs = np.asarray(probs, dtype=np.float64)
    check_output(probs, (len(texts), len(model.labels)), "probabilities")
    if model.problem_type != MULTI_LABEL:
        return [{label: float(p) for label, p in zip(model.labels, row)} for row in probs]
    chosen = np.asarray(decide(model, probs), dtype=bool)  # (n, L)
    thresholds = {label: float(t) for label, t in zip(model.labels, model.thresholds)}
    return [
        {
            "label": [label for label, on in zip(model.labels, picked) if on],
            "probs": {label: float(p) for label, p in zip(model.labels, row)},
            "thresholds": thresholds,
        }
        for row, picked in zip(probs, chosen)
    ]


def check_output(array: np.ndarray, shape: tuple[int, ...], what: str) -> None:
    if array.shape != shape or not np.all(np.isfinite(array)):
        raise ValueError(f"it returned {what} of shape {array.shape} that are not all finite")


def decision(answer: dict[str, Any], problem_type: str) -> Any:
    """What an answer decides: the most probable class, the chosen labels, or the value."""
    if problem_type == REGRESSION:
        return answer["value"]
    if problem_type == MULTI_LABEL:
        return answer["label"]
    return max(answer, key=answer.get)


def gold_label(target: Any, labels: Sequence[str], problem_type: str) -> Any:
    """A row of `TaskData.targets` as `predictions.jsonl` holds a gold label: a class name, a list of label names, a
    value."""
    if problem_type == REGRESSION:
        return float(target)
    if problem_type == MULTI_LABEL:
        return [label for label, on in zip(labels, target) if on]
    return labels[int(target)]


def short(decided: Any) -> str:
    """A decision or a gold label (as `predictions.jsonl` holds them: a class, a list of labels, a number) in a few
    characters."""
    if isinstance(decided, list | tuple):
        return "; ".join(map(str, decided)) or NO_LABEL
    if isinstance(decided, float | int) and not isinstance(decided, bool):
        return number(decided)
    return str(decided)


def number(value: float) -> str:
    """A value with four significant digits (3.421, 12.35, 1235); the API gives it in full."""
    return f"{value:.4g}" if math.isfinite(value) else str(value)
