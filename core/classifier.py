"""The `Classifier` protocol every trained run is read through, and `load(run_dir)`.

`load` reads `run.json`, then imports its side's predict module (`core.sides`, e.g. `finetune.predict`) and
calls its `load(run_dir, run)`, so compare, the app and user scripts never import training code, and each side
stays importable without the other.

    >>> from core.classifier import load
    >>> model = load("reports/sst2/runs/finetune")          # doctest: +SKIP
    >>> model.predict_proba(["a gripping, funny film"])     # doctest: +SKIP
    array([[0.02, 0.98]], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from core import sides
from core.rundir import RunError, read_run_json
from core.translator import is_translation_run


@runtime_checkable
class Classifier(Protocol):
    """A trained text classifier.

    Attributes:
        name: how reports and the app call it (the side unless renamed).
        side: the classification side that trained it (`core.sides`: `finetune`, `scratch`).
        labels: class names in label-id order.
        run: the parsed `run.json`.
    """

    name: str
    side: str
    labels: list[str]
    run: dict[str, Any]

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        """Class probabilities, shape (len(texts), len(labels)), each row summing to 1."""
        ...


def predict_in_batches(
    predict: Callable[[list[Any]], np.ndarray], items: Sequence[Any], batch_size: int, width: int | None = None
) -> np.ndarray:
    """`predict` (a list of items -> rows (n, width)) over `items` in batches of similar length, so each batch is
    padded to little more than its own items; the rows come back in the order given, float32. `width` (the row
    length) gives an empty input its shape (0, width)."""
    order = np.argsort([len(item) for item in items], kind="stable")
    out = None if width is None else np.zeros((len(items), width), np.float32)
    for start in range(0, len(items), batch_size):
        chosen = order[start : start + batch_size]
        rows = predict([items[i] for i in chosen])
        if out is None:
            out = np.zeros((len(items), rows.shape[1]), np.float32)
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
