"""A model's answer to each input, in the shape `/classify` returns it; each kind of task says its own
(`ShownKind.app_answers`, `core.kinds`):

- single label: `{label: probability}`, the classes' probabilities (summing to 1) in label order;
- multi-label: `{"label": [names], "probs": {label: probability}, "thresholds": {label: threshold}}`: each label's
  independent probability, the threshold the run chose for it on validation, and the labels that reach theirs
  (`Kind.decide`), as `predictions.jsonl` names `label` and `probs`;
- regression: `{"value": number}`, as `predictions.jsonl` names it.

What an answer decides (a class, the chosen labels, the value) is `ShownKind.decision`; `short` says it, or a gold label,
in a few characters, for the examples.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from demo.kinds import number, shown

__all__ = ["NO_LABEL", "answers", "check_output", "number", "short"]

NO_LABEL = "(none)"  # a multi-label answer or gold with no label


def answers(model: Any, texts: Sequence[str], text_pairs: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """`model`'s answer to each text (or `(text, text_pair)` pair); raises ValueError when its output is unusable."""
    texts = list(texts)
    pairs = None if text_pairs is None else list(text_pairs)
    kind = model.kind
    if kind.gives_values:
        outputs = model.predict_values(texts, pairs)
    else:  # a single-text model is asked as before the pair kinds existed: with the texts alone
        outputs = model.predict_proba(texts) if pairs is None else model.predict_proba(texts, pairs)
    outputs = np.asarray(outputs, dtype=np.float64)
    check_output(outputs, (len(texts), *kind.empty_outputs(len(model.labels)).shape[1:]), kind.outputs)
    return shown(kind).app_answers(outputs, model.labels, model.thresholds)


def check_output(array: np.ndarray, shape: tuple[int, ...], what: str) -> None:
    if array.shape != shape or not np.all(np.isfinite(array)):
        raise ValueError(f"it returned {what} of shape {array.shape} that are not all finite")


def short(decided: Any) -> str:
    """A decision or a gold label (as `predictions.jsonl` holds them: a class, a list of labels, a number) in a few
    characters."""
    if isinstance(decided, list | tuple):
        return "; ".join(map(str, decided)) or NO_LABEL
    if isinstance(decided, float | int) and not isinstance(decided, bool):
        return number(decided)
    return str(decided)
