"""From raw label cells to each kind's labels: class ids, multi-hot rows or numbers (`core.data` describes the forms).

Every refusal names the file, the row and the value at fault, and the option that reads such a value (a single-label
column that holds several labels or real numbers names `--problem`).
"""

from __future__ import annotations

import logging
import math
import re

import datasets
import numpy as np

from core.kinds import MULTI_LABEL, REGRESSION, Kind
from core.reading import RawSplit, rows_named
from core.tables import DataError
from core.tasks import PAIR

logger = logging.getLogger(__name__)


def _as_label(value: object) -> object:
    """Normalises a raw label: None when missing, an int for integral values, else a stripped string."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    if isinstance(value, (bool, np.bool_)):
        return str(value)
    if isinstance(value, (int, np.integer)) or (isinstance(value, (float, np.floating)) and float(value).is_integer()):
        return int(value)
    text = str(value).strip()
    if text == "":
        return None
    if re.fullmatch(r"-?[0-9]+", text):
        return int(text)
    return text


def _blank(value: object) -> bool:
    """A missing label: None, NaN, an empty string, or a list (or label-columns row) of nothing but those."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return all(_blank(item) for item in value)
    return _as_label(value) is None


def _is_unlabelled(split: RawSplit) -> bool:
    """The hub's GLUE test sets carry -1 for every label; such a split counts as absent."""
    return all(_blank(value) or _as_label(value) == -1 for value in split.labels)


def map_labels(
    raw: dict[str, RawSplit], labels: list[str] | None, kind: Kind, separator: str
) -> tuple[dict[str, datasets.Dataset], list[str]]:
    """Each split as a Dataset of `text` (`text_pair`) and `label` in the kind's form, and the label names."""
    for name in list(raw):
        if _is_unlabelled(raw[name]):
            if name == "train":
                raise DataError(f"{raw[name].origin}: the train split has no labels.")
            logger.info("%s has no labels; treating the %s split as absent.", raw[name].origin, name)
            del raw[name]
    targets, labels = kind.map_labels(raw, labels, separator)
    feature = kind.label_feature(labels)
    pairs = raw["train"].pairs is not None
    features = datasets.Features(
        {"text": datasets.Value("string"), **({PAIR: datasets.Value("string")} if pairs else {}), "label": feature}
    )
    splits = {}
    for name, split in raw.items():
        columns = {"text": split.texts, **({PAIR: split.pairs} if pairs else {}), "label": targets[name]}
        splits[name] = datasets.Dataset.from_dict(columns, features=features)
    return splits, labels


def numbers(raw: dict[str, RawSplit]) -> dict[str, list[float]]:
    """Regression: each row's number."""
    return {
        name: [_number(v, row, split, name) for row, v in zip(split.rows, split.labels)] for name, split in raw.items()
    }


def class_ids(raw: dict[str, RawSplit], labels: list[str] | None, separator: str) -> tuple[dict, list[str]]:
    """Single label: each row's class id, and the class names (from train when not given)."""
    values = {name: [_as_label(cell) for cell in split.labels] for name, split in raw.items()}
    for name, split in raw.items():
        _refuse_other_kinds(split, values[name], separator, set(labels or ()))
    if labels is None:
        labels = _labels_from_train(values["train"])
    index = {name: i for i, name in enumerate(labels)}
    ids = {
        name: [_label_id(value, row, split, name, labels, index) for row, value in zip(split.rows, values[name])]
        for name, split in raw.items()
    }
    seen = set(ids["train"])
    for name in ("validation", "test"):
        if name in ids:
            unseen = sorted(set(ids[name]) - seen)
            if unseen:
                _refuse_unseen(raw[name], name, labels[unseen[0]])
    return ids, labels


def _refuse_unseen(split: RawSplit, name: str, label: str) -> None:
    raise DataError(
        f"{split.origin}: the {name} split has label {label!r}, which the train split never has; a model cannot "
        "learn it. Add training examples of it or remove it."
    )


def _refuse_other_kinds(split: RawSplit, values: list[object], separator: str, known: set[str]) -> None:
    """Refuses single-label values that look like several labels per row (a list, or names joined by `separator`)
    or like real numbers, unless they are class names the labels file (or task) gives, naming the flag to use."""
    several, real = [], []
    for row, cell, value in zip(split.rows, split.labels, values):
        if isinstance(value, str) and value in known:
            continue
        if isinstance(cell, (list, tuple, np.ndarray)) or (
            isinstance(value, str) and sum(bool(part.strip()) for part in value.split(separator)) > 1
        ):
            several.append((row, cell))
        elif isinstance(value, str) and _is_real_number(value):
            real.append((row, cell))
    where = f"{split.origin}: column {split.columns.label!r}"
    if several:
        raise DataError(
            f"{where} holds several labels in a row ({rows_named([r for r, _ in several])}, such as "
            f"{_shown(several[0][1])}). For several labels per text pass --problem {MULTI_LABEL} (with "
            "--label-separator if they are not joined by ';'), or name such classes in --labels-file."
        )
    if real:
        raise DataError(
            f"{where} holds real numbers ({rows_named([r for r, _ in real])}, such as {_shown(real[0][1])}). For a "
            f"number to predict pass --problem {REGRESSION}, or name such classes in --labels-file."
        )


def _shown(cell: object) -> str:
    return repr(list(cell) if isinstance(cell, np.ndarray) else cell)


def _is_real_number(text: str) -> bool:
    """'3.5' and '1e-3' are; '3', '3.0', 'nan' and 'positive' are not."""
    try:
        value = float(text)
    except ValueError:
        return False
    return math.isfinite(value) and not value.is_integer()


def multi_hot(raw: dict[str, RawSplit], labels: list[str] | None, separator: str) -> tuple[dict, list[str]]:
    """Multi-label: each row's labels as a multi-hot float32 array (n, len(labels)), and the label names (given by
    --label-columns, the labels file or the task, else those train holds)."""
    if raw["train"].columns.label_columns:
        ids = {name: _ids_from_label_columns(split) for name, split in raw.items()}
        labels = list(raw["train"].columns.label_columns)
    else:
        parts = {name: [_label_parts(cell, separator) for cell in split.labels] for name, split in raw.items()}
        if labels is None:
            labels = _labels_from_train([part for row in parts["train"] for part in row])
        index = {name: i for i, name in enumerate(labels)}
        ids = {
            name: [
                [_label_id(part, row, split, name, labels, index) for part in row_parts]
                for row, row_parts in zip(split.rows, parts[name])
            ]
            for name, split in raw.items()
        }
    hot = {}
    for name, rows in ids.items():
        hot[name] = np.zeros((len(rows), len(labels)), np.float32)  # (n, L)
        for i, row in enumerate(rows):
            hot[name][i, row] = 1.0
    in_train = hot["train"].any(axis=0)
    for name in ("validation", "test"):
        if name in hot:
            unseen = np.flatnonzero(hot[name].any(axis=0) & ~in_train)
            if len(unseen):
                _refuse_unseen(raw[name], name, labels[unseen[0]])
    return hot, labels


def _label_parts(cell: object, separator: str) -> list[object]:
    """A multi-label cell's labels (names or ids): a list's items, or a string split at `separator`."""
    if isinstance(cell, (list, tuple, np.ndarray)):
        items = list(cell)
    elif isinstance(cell, str):
        items = cell.split(separator)
    else:
        items = [cell]
    return [part for part in map(_as_label, items) if part is not None]


def _ids_from_label_columns(split: RawSplit) -> list[list[int]]:
    """The ids of the label columns that hold 1 in each row; any cell but 0 or 1 is refused with its column and row."""
    rows = []
    for row, cells in zip(split.rows, split.labels):
        ids = []
        for k, (name, cell) in enumerate(zip(split.columns.label_columns, cells)):
            bit = _bit(cell)
            if bit is None:
                raise DataError(
                    f"{split.origin}: column {name!r} holds {_shown(cell)} in data row {row}; a --label-columns "
                    "column holds only 0 (the label does not apply) or 1 (it does). Fix the row."
                )
            if bit:
                ids.append(k)
        rows.append(ids)
    return rows


def _bit(cell: object) -> int | None:
    """0 or 1 from a 0/1 cell (a number, a bool or its text), else None."""
    if isinstance(cell, (bool, np.bool_)):
        return int(cell)
    try:
        value = float(str(cell).strip()) if isinstance(cell, str) else float(cell)
    except (TypeError, ValueError):
        return None
    return int(value) if value in (0.0, 1.0) else None


def _number(value: object, row: int, split: RawSplit, name: str) -> float:
    """A regression label as a float; a missing one or one that is not a finite number is refused with its row."""
    if _blank(value):
        raise DataError(f"{split.origin}: row {row} of the {name} split has no label; fill it in or drop the row.")
    try:
        if isinstance(value, (bool, np.bool_)):
            raise ValueError
        number = float(value.strip()) if isinstance(value, str) else float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number):
        raise DataError(
            f"{split.origin}: row {row} has label {_shown(value)}, which is not a number; a regression label is a "
            "number such as 3 or 0.25. Fix the row or drop it."
        )
    return number


def _labels_from_train(values: list[object]) -> list[str]:
    """The label names the train rows hold, sorted (numerically when they are all integers)."""
    present = {v for v in values if v is not None}
    if all(isinstance(v, int) for v in present):
        return [str(v) for v in sorted(present)]
    return sorted(str(v) for v in present)


def _label_id(value: object, row: int, split: RawSplit, name: str, labels: list[str], index: dict) -> int:
    """The id of `value` in data row `row` (1-based): a label name, or an id when the names are not numbers."""
    if value is None:
        raise DataError(f"{split.origin}: row {row} of the {name} split has no label; fill it in or drop the row.")
    if str(value) in index:
        return index[str(value)]
    ids_allowed = not any(re.fullmatch(r"-?[0-9]+", label) for label in labels)
    if ids_allowed and isinstance(value, int) and 0 <= value < len(labels):
        return value
    also = f" nor a label id 0..{len(labels) - 1}" if ids_allowed else ""
    raise DataError(
        f"{split.origin}: row {row} has label {value!r}, which is not one of the {len(labels)} classes "
        f"({', '.join(labels)}){also}. Fix the row or the labels file."
    )
