"""The `Classifier` protocol every trained run is read through, the `BaseClassifier` both sides' classifiers build
on, and `load(run_dir)`.

`load` reads `run.json` as a `RunRecord`, then imports its side's predict module (`core.sides`, e.g.
`finetune.predict`) and calls its `load(run_dir, record)`, so compare, the app and user scripts never import training
code, and each side stays importable without the other.

    >>> from core.classifier import load
    >>> model = load("reports/sst2/runs/finetune")          # doctest: +SKIP
    >>> model.predict_proba(["a gripping, funny film"])     # doctest: +SKIP
    array([[0.02, 0.98]], dtype=float32)
    >>> model.predict(["a gripping, funny film"])           # doctest: +SKIP
    array([1])
    >>> stsb = load("reports/stsb/runs/finetune")            # doctest: +SKIP
    >>> stsb.predict_values(["A man plays a guitar."], ["Someone plays music."])  # doctest: +SKIP
    array([3.1], dtype=float32)

A side's classifier subclasses `BaseClassifier` and supplies `outputs`, its forward pass; the base checks the inputs,
gives an empty input its shape, and asks the kind (`core.kinds`) for everything that differs by kind. A run that reads
long texts in windows (`--long-text chunks`, `core.long_text`) is scored per window by the side (`window_logits`) and
pooled here into one row per text, so that calibration, thresholds and every score downstream see texts.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from core import kinds, sides
from core.attribution import DEFAULT_STEPS, Attribution, PathGradients, attribute
from core.console import quiet_library_import
from core.kinds import Kind
from core.long_text import DEFAULT_READING, Reading, Span, pool
from core.record import RunRecord, read_run
from core.rundir import RunError
from core.translator import is_translation_run


@runtime_checkable
class Classifier(Protocol):
    """A trained model of one of the kinds of task (`core.kinds`), on single texts or on text pairs.

    Attributes:
        name: how reports and the app call it (the side unless renamed).
        side: the classification side that trained it (`core.sides`: `finetune`, `scratch`).
        kind: its kind of task (`core.kinds.Kind`); `problem_type` is the kind's name.
        has_pairs: whether each input is a `(text, text_pair)` pair.
        labels: class (label) names in id order; [] for regression.
        thresholds: a multi-label run's decision threshold per label (chosen on validation); None otherwise.
        temperatures: the run's calibration (run.json `calibration`), applied to every output; None: T = 1.
        record: the run's `RunRecord` (None while the run is still being trained).
        attends: whether `explain` gives its attention maps (a model without them raises NotImplementedError).
        attributes: whether `attribute` gives its Integrated Gradients (a model without them raises
            NotImplementedError).
    """

    name: str
    side: str
    kind: Kind
    has_pairs: bool
    labels: list[str]
    thresholds: list[float] | None
    temperatures: list[float] | None
    record: RunRecord | None
    attends: bool
    attributes: bool

    @property
    def problem_type(self) -> str: ...

    def predict_proba(self, texts: list[str], text_pairs: list[str] | None = None) -> np.ndarray:
        """The classification kinds' probabilities, (len(texts), len(labels)) float32: rows summing to 1 (single
        label) or each label's independent probability (multi-label). `text_pairs` exactly for a pair task."""
        ...

    def predict_values(self, texts: list[str], text_pairs: list[str] | None = None) -> np.ndarray:
        """A regression model's values, (len(texts),) float32. `text_pairs` exactly for a pair task."""
        ...

    def predict(self, texts: list[str], text_pairs: list[str] | None = None) -> np.ndarray:
        """The kind's decisions (`Kind.decide`): class ids (n,), 0/1 rows (n, L) at the thresholds, or the values."""
        ...

    def explain(self, text: str, text_pair: str | None = None) -> tuple[list[str], np.ndarray]:
        """The text's (or pair's) tokens as the model saw them and its attention weights (layers, heads, T, T),
        where the model `attends`."""
        ...

    def attribute(
        self, texts: list[str], text_pairs: list[str] | None = None, target: Any = None, steps: int = DEFAULT_STEPS
    ) -> list[Attribution]:
        """Each text's (pair's) words with their Integrated Gradients (`core.attribution`), where the model
        `attributes`."""
        ...


class BaseClassifier(ABC):
    """The `Classifier` protocol over one method a side supplies, `outputs` (its forward pass), calibrated by the
    temperatures its run.json `calibration` records (`temperatures`; None: T = 1) for `predict_proba` and `predict`.

    Args:
        record: the run's record, from which the kind, the labels, the pairs, the thresholds and the temperatures are
            read.
        kind, labels, has_pairs, thresholds, temperatures: given instead of (or over) the record's, for a model still
            being trained (without either: a single-label classifier of single texts, uncalibrated).

    A side's classifier takes its own model arguments first, then `record` and `forward` (the ONNX Runtime path), then
    these keywords in this order, and `batch_size`.
    """

    side: ClassVar[str]
    attends: ClassVar[bool] = False  # whether the side supplies `explain`
    attributes: ClassVar[bool] = False  # whether the side supplies `embedding_gradients`, which `attribute` needs

    def __init__(
        self,
        record: RunRecord | None = None,
        *,
        kind: Kind | None = None,
        labels: Sequence[str] | None = None,
        has_pairs: bool | None = None,
        thresholds: Sequence[float] | None = None,
        temperatures: Sequence[float] | None = None,
    ) -> None:
        self.record = record
        self.name = self.side
        self.kind = kind or (record.kind if record is not None else kinds.get(None))
        self.labels = list(labels if labels is not None else (record.labels if record is not None else []))
        self.has_pairs = bool(has_pairs if has_pairs is not None else (record is not None and record.has_pairs))
        if thresholds is None and record is not None:
            thresholds = record.thresholds
        self.thresholds = list(thresholds) if thresholds else None
        if temperatures is None and record is not None:
            temperatures = record.temperatures
        self.temperatures = list(temperatures) if temperatures else None  # calibration; None: T = 1
        # how a text longer than the window is read: the run's (`head` for a run recorded before the option)
        self.reading: Reading = record.data.reading if record is not None else DEFAULT_READING

    @property
    def problem_type(self) -> str:
        """The kind's name (transformers' `problem_type`)."""
        return self.kind.name

    @abstractmethod
    def outputs(self, texts: list[str], text_pairs: list[str] | None = None) -> np.ndarray:
        """The model's outputs for these texts (and their second texts, exactly for a pair task), in the order given,
        float32: probabilities (n, C) or (n, L), or values (n,). Called with at least one text."""

    def predict_proba(self, texts: list[str], text_pairs: list[str] | None = None) -> np.ndarray:
        """Probabilities, (len(texts), len(labels)) float32: rows summing to 1 (single label) or each label's
        independent probability (multi-label). `text_pairs`, one second text per text, exactly for a pair task."""
        if self.kind.gives_values:
            raise ValueError(f"a {self.kind.title} model gives values: call predict_values, not predict_proba.")
        return self._checked_outputs(texts, text_pairs)

    def predict_values(self, texts: list[str], text_pairs: list[str] | None = None) -> np.ndarray:
        """A regression run's values, (len(texts),) float32; `text_pairs` as for `predict_proba`."""
        if not self.kind.gives_values:
            raise ValueError(f"a {self.kind.name} model gives probabilities: call predict_proba, not predict_values.")
        return self._checked_outputs(texts, text_pairs)

    def predict(self, texts: list[str], text_pairs: list[str] | None = None) -> np.ndarray:
        """The kind's decisions for each text (pair) (`Kind.decide`): class ids (n,) for a single label, 0/1 rows
        (n, L) at the run's thresholds for multi-label, the values for regression."""
        return self.kind.decide(self._checked_outputs(texts, text_pairs), self.thresholds)

    def attribute(
        self, texts: list[str], text_pairs: list[str] | None = None, target: Any = None, steps: int = DEFAULT_STEPS
    ) -> list[Attribution]:
        """Integrated Gradients of each text (pair) over its token vectors, summed to words (`core.attribution`).

        Args:
            texts, text_pairs: as for `predict_proba`.
            target: the label to explain (a name or an id; a list of them for a multi-label model), the same for
                every text; by default what the model chose (each chosen label for multi-label); a model of values
                explains its value.
            steps: the trapezoid rule's intervals along the path: more steps, a smaller completeness `gap`.

        Returns:
            One `Attribution` per text (`.words`, `.scores`, `.gap`; `.by_label` for each label explained).
        """
        return attribute(self, list(texts), None if text_pairs is None else list(text_pairs), target, steps)

    @property
    def window(self) -> int:
        """The pieces of text one window holds (its special tokens left out); a side that reads windows supplies it."""
        raise NotImplementedError(f"the {self.side} side does not say how many pieces it reads at a time.")

    def piece_counts(self, texts: list[str]) -> np.ndarray | None:
        """Each text's length in the model's pieces (special tokens left out), int64 (n,); None when the side does not
        count them."""
        return None

    def window_logits(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Every window of each text as the reading spans it (`Reading.spans`): the logits of each, (W, K) (a value
        model's (W, 1) or (W,)), and the text of each, int64 (W,); a side that reads windows supplies it."""
        raise NotImplementedError(f"the {self.side} side does not read texts in windows.")

    def pooled_outputs(self, texts: list[str]) -> np.ndarray:
        """The outputs of texts read in windows: the windows' logits pooled into one row per text (`--chunk-pooling`,
        regression always the mean), then activated as the model's own outputs are."""
        logits, documents = self.window_logits(texts)
        pooled = pool(logits, documents, self.reading.chunk_pooling, values=self.kind.gives_values)
        return np.asarray(self.kind.activate(pooled), np.float32)

    def windows_read(self, text: str) -> tuple[int, int]:
        """How many windows the model read `text` in, and which decided: the window scoring highest for the label
        the pooled answer chose (a value model's: the window whose value is nearest the answer)."""
        logits, _ = self.window_logits([str(text)])
        logits = logits.reshape(len(logits), -1)  # (W, K)
        pooled = pool(logits, np.zeros(len(logits), np.int64), self.reading.chunk_pooling, self.kind.gives_values)
        if self.kind.gives_values:
            return len(logits), int(np.argmin(np.abs(logits[:, 0] - pooled[0, 0])))
        return len(logits), int(np.argmax(logits[:, int(np.argmax(pooled[0]))]))

    def embedding_gradients(
        self, text: str, text_pair: str | None, points: np.ndarray, targets: list[int | None], span: Span = None
    ) -> PathGradients:
        """The outputs and their gradients at `points` (a in [0, 1]) along the path from the baseline (word pieces'
        token vectors at zero) to the input, for one text (pair) (`core.attribution.PathGradients`), or with `span`
        for that window `[start, end)` of a text's pieces; a side whose model `attributes` supplies it."""
        raise NotImplementedError(f"the {self.side} side does not attribute its outputs to words.")

    def explain(self, text: str, text_pair: str | None = None) -> tuple[list[str], np.ndarray]:
        """The tokens and attention maps of one text (pair); a side whose model `attends` supplies it."""
        raise NotImplementedError(f"the {self.side} side does not show its attention.")

    def check_inputs(self, texts: list[str], text_pairs: list[str] | None) -> None:
        """Raises a ValueError unless `text_pairs` is given exactly for a pair task, as many as `texts`."""
        if self.has_pairs and text_pairs is None:
            raise ValueError("this model reads text pairs: pass text_pairs, the second text of each input.")
        if not self.has_pairs and text_pairs is not None:
            raise ValueError("this model reads single texts: pass no text_pairs.")
        if text_pairs is not None and len(text_pairs) != len(texts):
            raise ValueError(f"got {len(texts)} texts but {len(text_pairs)} text_pairs; give one second text per text.")

    def _checked_outputs(self, texts: list[str], text_pairs: list[str] | None) -> np.ndarray:
        self.check_inputs(texts, text_pairs)
        texts = [str(text) for text in texts]
        text_pairs = None if text_pairs is None else [str(text) for text in text_pairs]
        if not texts:
            return self.kind.empty_outputs(len(self.labels))
        pooled = self.reading.pools and text_pairs is None
        outputs = self.pooled_outputs(texts) if pooled else self.outputs(texts, text_pairs)
        outputs = self.kind.tidy_outputs(np.asarray(outputs, np.float32))
        return self.kind.calibration.apply(outputs, self.temperatures)  # run.json `calibration`, fitted on validation


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
    record = read_run(run_dir)
    side = sides.of_run(record)
    quiet_library_import()
    try:
        model = side.load(run_dir, record)
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
            read_run(path)  # raises the precise error for a missing or unfinished run
        runs.extend(children)
    return runs
