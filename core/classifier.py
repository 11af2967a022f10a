"""The `Classifier` protocol every trained run is read through, and `load(run_dir)`.

`load` reads `run.json`, then imports its side's predict module (`core.sides`, e.g. `finetune.predict`) and
calls its `load(run_dir, run)`, so compare, the app and user scripts never import training code, and each side
stays importable without the other.

    >>> from core.classifier import load
    >>> model = load("reports/sst2/runs/finetune")          # doctest: +SKIP
    >>> model.predict_proba(["a gripping, funny film"])     # doctest: +SKIP
    array([[0.02, 0.98]], dtype=float32)
    >>> stsb = load("reports/stsb/runs/finetune")            # doctest: +SKIP
    >>> stsb.predict_values(["A man plays a guitar."], ["Someone plays music."])  # doctest: +SKIP
    array([3.1], dtype=float32)

Each side's classifier keeps a `Kind` (read from run.json with `Kind.of_run`) and calls `check_inputs` first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from core import sides
from core.rundir import RunError, problem_type, read_run_json
from core.tasks import MULTI_LABEL, REGRESSION, SINGLE_LABEL
from core.translator import is_translation_run


@runtime_checkable
class Classifier(Protocol):
    """A trained model of one of the three kinds of problem (`core.kinds`), on single texts or on text pairs.

    Attributes:
        name: how reports and the app call it (the side unless renamed).
        side: the classification side that trained it (`core.sides`: `finetune`, `scratch`).
        problem_type: `single_label_classification`, `multi_label_classification` or `regression`.
        has_pairs: whether each input is a `(text, text_pair)` pair.
        labels: class (label) names in id order; [] for regression.
        thresholds: a multi-label run's decision threshold per label (chosen on validation); None otherwise.
        run: the parsed `run.json`.
    """

    name: str
    side: str
    problem_type: str
    has_pairs: bool
    labels: list[str]
    thresholds: list[float] | None
    run: dict[str, Any]

    def predict_proba(self, texts: list[str], text_pairs: list[str] | None = None) -> np.ndarray:
        """The classification kinds' probabilities, (len(texts), len(labels)) float32: rows summing to 1 (single
        label) or each label's independent probability (multi-label). `text_pairs` exactly for a pair task."""
        ...

    def predict_values(self, texts: list[str], text_pairs: list[str] | None = None) -> np.ndarray:
        """A regression model's values, (len(texts),) float32. `text_pairs` exactly for a pair task."""
        ...


@dataclass(frozen=True)
class Kind:
    """What a run.json says about the problem a classifier solves (the `Classifier` attributes of the same names)."""

    problem_type: str
    has_pairs: bool
    thresholds: list[float] | None

    @classmethod
    def of_run(cls, run: dict[str, Any]) -> Kind:
        """A run written before there were other kinds is single label, on single texts."""
        thresholds = run.get("thresholds")
        return cls(problem_type(run), bool(run["data"].get("text_pair_column")), thresholds and list(thresholds))


def check_inputs(model: Classifier | Kind, texts: list[str], text_pairs: list[str] | None, want: str) -> None:
    """Raises a ValueError unless `text_pairs` is given exactly for a pair task (as many as `texts`) and the kind
    of `model` gives `want` (`probabilities` or `values`)."""
    if model.has_pairs and text_pairs is None:
        raise ValueError("this model reads text pairs: pass text_pairs, the second text of each input.")
    if not model.has_pairs and text_pairs is not None:
        raise ValueError("this model reads single texts: pass no text_pairs.")
    if text_pairs is not None and len(text_pairs) != len(texts):
        raise ValueError(f"got {len(texts)} texts but {len(text_pairs)} text_pairs; give one second text per text.")
    regression = model.problem_type == REGRESSION
    if want == "probabilities" and regression:
        raise ValueError("a regression model gives values: call predict_values, not predict_proba.")
    if want == "values" and not regression:
        raise ValueError(f"a {model.problem_type} model gives probabilities: call predict_proba, not predict_values.")


def decide(model: Classifier | Kind, probs: np.ndarray) -> np.ndarray:
    """The decisions a classifier makes from its probabilities: class ids (n,) by argmax for single label; (n, L)
    bool, a label chosen when its probability reaches its threshold, for multi-label."""
    probs = np.asarray(probs)
    if model.problem_type == MULTI_LABEL:
        return probs >= np.asarray(model.thresholds, probs.dtype)[None, :]
    if model.problem_type == SINGLE_LABEL:
        return probs.argmax(axis=1)
    raise ValueError("a regression model decides nothing: its values are its predictions.")


def predict_in_batches(
    predict: Callable[[list[Any]], np.ndarray],
    items: Sequence[Any],
    batch_size: int,
    width: int | None = None,
    lengths: Sequence[int] | None = None,
) -> np.ndarray:
    """`predict` (a list of items -> rows (n, width), or values (n,)) over `items` in batches of similar length, so
    each batch is padded to little more than its own items; the rows come back in the order given, float32.
    `lengths` are the items' lengths (default `len(item)`); `width` (the row length) gives an empty input its shape
    (0, width)."""
    order = np.argsort([len(item) for item in items] if lengths is None else lengths, kind="stable")
    out = None if width is None else np.zeros((len(items), width), np.float32)
    for start in range(0, len(items), batch_size):
        chosen = order[start : start + batch_size]
        rows = predict([items[i] for i in chosen])
        if out is None:
            out = np.zeros((len(items), *rows.shape[1:]), np.float32)
        out[chosen] = rows
    return out if out is not None else np.zeros((0, 0), np.float32)


def load(run_dir: str | Path, name: str | None = None) -> Classifier:
    """Loads the finished run in `run_dir` through its side's predict module.

    Args:
        run_dir: a directory holding `run.json` and the side's model files.
        name: the name reports and the app show; defaults to the side.
    """
    if is_translation_run(run_dir):
        raise RunError(f"{run_dir} is a translation run, not a classifier; load it with core.translator.load.")
    run = read_run_json(run_dir)
    side = sides.of_run(run)
    try:
        model = side.load(run_dir, run)
    except ImportError as error:
        raise RunError(f"{run_dir} was written by the {side.name!r} side, which cannot be imported: {error}") from error
    model.name = name or side.name
    return model


def find_runs(paths: list[str | Path]) -> list[Path]:
    """Expands each path to itself when it is a run, else to its children that are runs (sorted)."""
    runs = []
    for path in map(Path, paths):
        if (path / "run.json").is_file():
            runs.append(path)
            continue
        children = sorted(p for p in path.iterdir() if (p / "run.json").is_file()) if path.is_dir() else []
        if not children:
            read_run_json(path)  # raises the precise error for a missing or unfinished run
        runs.extend(children)
    return runs
