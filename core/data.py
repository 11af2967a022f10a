"""One place that turns a task or a user's files into the splits both sides train on.

Three kinds of problem (transformers' `problem_type` names, `core.tasks.PROBLEM_TYPES`): one class per text
(`single_label_classification`), any number of labels per text (`multi_label_classification`) and a number per
text (`regression`); each with one text per example or, for a pair task, two. Every split is a `datasets.Dataset`
with a SHA-256 fingerprint, so that a run records exactly what it saw and compare can refuse runs that saw
different data. What `load_task` returns, a `TaskData`, is what both sides, compare and the app read:

- `problem_type`: one of the three names; `headline`: the name of the metric that ranks models of that kind
  (`"accuracy"`, `"macro_f1"`, `"spearman"`; `core.tasks.HEADLINE_METRICS`).
- `labels`: class (single label) or label (multi-label) names in id order; `[]` for regression. `num_outputs`:
  the numbers a model gives per example (transformers' `num_labels`): `len(labels)`, or 1 for regression.
- Each split's columns: `text` (str); `text_pair` (str) when `has_pairs` (`pair_column` names the column it came
  from, None without pairs); `label`: a `ClassLabel` id (single label), a multi-hot
  `List(Value("float32"), length=len(labels))` of 0.0 and 1.0 (multi-label), or a `Value("float32")` (regression).
- `texts(split)` and `text_pairs(split)` (None without pairs) as lists of str; `inputs(split)`, each row's text or
  its `(text, text_pair)`, the unit of leakage.
- `targets(split)`: the labels as an array: int64 `(n,)` class ids, float32 `(n, len(labels))` multi-hot, or
  float32 `(n,)` values. `label_ids(split)`: the int64 class ids of a single-label task (an error for the others).
- `fingerprints`, `leakage`, `carved`, `source`, and `describe(args)`: the `data` section of run.json
  (`docs/formats.md`; for regression with `value_range`, the train split's smallest and largest value).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import math
import os
import re
import socket
import threading
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import datasets
import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from core.args import DataArguments
from core.tables import DataError, check_file, read_table, read_text
from core.tasks import (
    DATA_DIR_ENV,
    HEADLINE_METRICS,
    MIRROR_LABEL_SEPARATOR,
    MULTI_LABEL,
    REGRESSION,
    SINGLE_LABEL,
    Columns,
    TaskSpec,
    get_task,
    where_mirrors_were_sought,
)

logger = logging.getLogger(__name__)

SPLITS = ("train", "validation", "test")
HELD_OUT_FRACTION = 0.1
HUB_CHECK_SECONDS = 5  # how long to wait for the hub to answer before calling it unreachable
PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")
LISTED_ROWS = 10  # rows named in a message about dropped rows; the rest are counted
PAIR = "text_pair"  # the column of a pair task's second text in every split


@dataclass
class RawSplit:
    """A split before label mapping: the text (and second text) of each kept row, and its raw label cell(s)."""

    texts: list[str]
    pairs: list[str] | None  # the second texts of a pair task, else None
    labels: list[object]  # the label column's cell per row; with `columns.label_columns`, a tuple of the row's cells
    origin: str  # a file path or "hub:<id>/<split>", for messages
    rows: list[int]  # each kept row's number among the source's data rows (1-based), for messages
    columns: Columns  # where the rows were read from, for messages


@dataclass
class TaskData:
    """The splits of one task, its kind, label names and fingerprints; what both sides train on (the module
    docstring lists the interface)."""

    splits: datasets.DatasetDict
    labels: list[str]
    source: str
    carved: list[str] = field(default_factory=list)
    problem_type: str = SINGLE_LABEL
    pair_column: str | None = None  # the column the second texts came from, for a pair task

    @property
    def headline(self) -> str:
        """The metric that ranks models of this kind of task: accuracy, macro_f1 or spearman."""
        return HEADLINE_METRICS[self.problem_type]

    @property
    def has_pairs(self) -> bool:
        return self.pair_column is not None

    @property
    def num_outputs(self) -> int:
        """The numbers a model gives per example: one per class or label, one value for regression (transformers'
        `num_labels`)."""
        return 1 if self.problem_type == REGRESSION else len(self.labels)

    @functools.cached_property
    def fingerprints(self) -> dict[str, str]:
        """SHA-256 of each split, computed once per TaskData (the splits never change after loading)."""
        return {name: fingerprint(split, self.labels) for name, split in self.splits.items()}

    def texts(self, split: str) -> list[str]:
        return column(self.splits[split], "text")

    def text_pairs(self, split: str) -> list[str] | None:
        """The second text of each row of a pair task; None when the task has single texts."""
        return column(self.splits[split], PAIR) if self.has_pairs else None

    def inputs(self, split: str) -> list:
        """Each row's input as leakage compares them: its text, or `(text, text_pair)` for a pair task."""
        texts = self.texts(split)
        return list(zip(texts, self.text_pairs(split))) if self.has_pairs else texts

    def targets(self, split: str) -> np.ndarray:
        """The labels of `split`: int64 (n,) class ids, float32 (n, len(labels)) multi-hot, or float32 (n,) values."""
        if self.problem_type == SINGLE_LABEL:
            return self.label_ids(split)
        if self.problem_type == MULTI_LABEL:
            return np.asarray(self.splits[split].with_format("numpy")["label"][:], dtype=np.float32).reshape(
                -1, len(self.labels)
            )
        return np.asarray(column(self.splits[split], "label"), dtype=np.float32)

    def label_ids(self, split: str) -> np.ndarray:
        """The class id of each row, int64 (n,); a single-label task's only (`targets` serves every kind)."""
        if self.problem_type != SINGLE_LABEL:
            raise ValueError(
                f"label_ids() gives the class ids of a single-label task; this task is {self.problem_type}: "
                "use targets()."
            )
        return np.asarray(column(self.splits[split], "label"), dtype=np.int64)

    def describe(self, args: DataArguments) -> dict:
        """The `data` section of run.json; for regression with the train split's `value_range`, the scale the
        app shows a value on."""
        record = {
            "options": args.to_dict(),
            "source": self.source,
            "problem_type": self.problem_type,
            "headline_metric": self.headline,
            "text_pair_column": self.pair_column,
            "labels": list(self.labels),
            "splits": {name: len(split) for name, split in self.splits.items()},
            "carved_from_train": list(self.carved),
            "fingerprints": self.fingerprints,
            "leakage": self.leakage,
        }
        if self.problem_type == REGRESSION:
            values = self.targets("train")
            record["value_range"] = [float(values.min()), float(values.max())]
        return record

    @functools.cached_property
    def leakage(self) -> dict[str, int]:
        """How many validation and test inputs (texts, or text pairs) also occur in train, counted once."""
        return leakage(self.inputs("train"), {name: self.inputs(name) for name in ("validation", "test")})


def leakage(train: list, others: dict[str, list]) -> dict[str, int]:
    """For each split of `others`, how many of its items (texts, text pairs, or translation sources) also occur in
    `train`."""
    seen = set(train)
    return {name: sum(item in seen for item in items) for name, items in others.items()}


def log_leakage(counts: dict[str, int], sizes: dict[str, int], unit: str) -> None:
    """Warns about every split of `counts` that shares items with train; `unit` names them ("texts")."""
    for name, shared in counts.items():
        if shared:
            logger.warning("%d of %d %s %s also occur in train.", shared, sizes[name], name, unit)


def column(split: datasets.Dataset, name: str) -> list:
    """One column of a split as a list, read as a whole: iterating a `datasets` column decodes it row by row, which
    made loading and fingerprinting the SST-2 mirror take 16 to 24 s instead of 0.8 to 1.2 s."""
    return split[name][:]


def fingerprint(split: datasets.Dataset, labels: list[str]) -> str:
    """SHA-256 over the split's rows in order: text, (text pair,) label, tab-separated, one row a line.

    The label is written as its class name (single label), the JSON list of its label names (multi-label) or its
    JSON number (regression), so the same rows of two kinds of task never share a fingerprint.
    """
    fields = [column(split, "text")]
    if PAIR in split.column_names:
        fields.append(column(split, PAIR))
    fields.append(label_texts(split, labels))
    digest = hashlib.sha256()
    for row in zip(*fields):
        digest.update(("\t".join(row) + "\n").encode())
    return digest.hexdigest()


def label_texts(split: datasets.Dataset, labels: list[str]) -> list[str]:
    """Each row's label as the fingerprint writes it (its kind read from the split's `label` feature)."""
    values = column(split, "label")
    feature = split.features["label"]
    if isinstance(feature, datasets.ClassLabel):
        return [labels[value] for value in values]
    if isinstance(feature, datasets.List):
        return [json.dumps([labels[k] for k, on in enumerate(row) if on]) for row in values]
    return [json.dumps(value) for value in values]


def load_task(args: DataArguments) -> TaskData:
    """Loads the task or files named by `args` into identical, fingerprinted splits.

    Raises:
        DataError: with the file, column, row or value at fault and what to do instead.
    """
    if args.task is not None:
        raw, labels, source = _load_named_task(args)
        separator = MIRROR_LABEL_SEPARATOR
    else:
        raw, labels, source = _load_files(args)
        separator = args.label_separator
    if "train" not in raw:
        raise DataError("No train split was found; pass --train-file or a task whose mirror has train.csv.")
    pair_column = raw["train"].columns.text_pair
    splits, labels = _map_labels(raw, labels, args.problem, separator)
    unit = "stratified training rows" if args.problem == SINGLE_LABEL else "training rows"
    splits, carved = carve_missing_splits(splits, args.seed, _hold_out, unit)
    if args.max_train_samples is not None and args.max_train_samples < len(splits["train"]):
        splits["train"] = stratified_subset(splits["train"], args.max_train_samples, args.seed)
    data = TaskData(datasets.DatasetDict(splits), labels, source, carved, args.problem, pair_column)
    _check_train(data)
    sizes = {name: len(split) for name, split in data.splits.items()}
    log_leakage(data.leakage, sizes, "text pairs" if data.has_pairs else "texts")
    logger.info(
        "Loaded %s: %s; %s",
        source,
        ", ".join(f"{name} {len(split):,}" for name, split in data.splits.items()),
        f"labels {labels}" if labels else f"values {data.targets('train').min():g} to {data.targets('train').max():g}",
    )
    return data


# --- reading ---------------------------------------------------------------------------------------------


def _load_named_task(args: DataArguments) -> tuple[dict[str, RawSplit], list[str] | None, str]:
    try:
        spec = get_task(args.task)
    except ValueError as error:
        raise DataError(str(error)) from None
    if args.data_dir:
        folder = Path(args.data_dir) / spec.name
        if (folder / "train.csv").is_file():
            raw = {
                split: _read_split(folder / f"{split}.csv", spec.mirror_columns)
                for split in SPLITS
                if (folder / f"{split}.csv").is_file()
            }
            labels_path = folder / "labels.txt"
            labels = read_labels_file(labels_path) if labels_path.is_file() else list(spec.labels)
            return raw, labels, f"{spec.name} (local mirror {folder})"
        if spec.hub_id is not None:
            logger.info("No local mirror of %s under %s; loading it from the hub.", spec.name, args.data_dir)
    mirror = _mirror_hint(spec)
    if spec.hub_id is None:
        raise DataError(
            f"No local mirror of task {spec.name!r} {where_mirrors_were_sought(args.data_dir)}. The task is read "
            f"from a local mirror only ({spec.no_hub}): {mirror}."
        )
    columns = Columns(
        tuple(args.text_column or spec.hub_columns.text),
        args.label_column or spec.hub_columns.label,
        spec.hub_columns.text_pair,
    )
    unreachable = hub_unreachable()
    if unreachable:
        raise DataError(
            f"No local mirror of task {spec.name!r} {where_mirrors_were_sought(args.data_dir)}, and the Hugging Face "
            f"hub cannot be reached ({unreachable}). Without a network, {mirror}."
        )
    try:
        hub = datasets.load_dataset(spec.hub_id, spec.hub_config)
    except Exception as error:  # noqa: BLE001 - any failure here means the same thing to the user
        raise DataError(
            f"Could not load task {spec.name!r} from the hub ({spec.hub_id}): {error}. Without a network, {mirror}."
        ) from error
    raw = {}
    for split in SPLITS:
        if split in hub:
            frame = hub[split].to_pandas()
            raw[split] = _frame_to_split(frame, columns, f"hub:{spec.hub_id}/{split}")
    return raw, list(spec.labels), f"{spec.name} (hub {spec.hub_id})"


def _mirror_hint(spec: TaskSpec) -> str:
    """What a local mirror of `spec` holds, for a message."""
    names = [*spec.mirror_columns.text, *filter(None, [spec.mirror_columns.text_pair]), spec.mirror_columns.label]
    labels = " and labels.txt" if spec.labels else ""
    return (
        f"point --data-dir (or {DATA_DIR_ENV}) at a folder holding {spec.name}/train.csv, validation.csv, test.csv "
        f"(columns {','.join(names)}){labels}, or pass your files with --train-file"
    )


def hub_unreachable(seconds: float = HUB_CHECK_SECONDS) -> str | None:
    """Why the Hugging Face hub cannot be reached from here, found out within `seconds`; None when it answers.

    Without this a machine with no network spends half a minute in `datasets`' retries before failing. None as
    well when the hub is set offline (`datasets` then answers from its cache at once) or reached through a proxy
    (which a direct connection says nothing about).
    """
    from huggingface_hub import constants

    if datasets.config.HF_HUB_OFFLINE or any(os.environ.get(name) for name in PROXY_VARIABLES):
        return None
    endpoint = urllib.parse.urlsplit(constants.ENDPOINT)
    host, port = endpoint.hostname, endpoint.port or (443 if endpoint.scheme == "https" else 80)
    outcome: list[str | None] = []

    def connect() -> None:
        try:
            socket.create_connection((host, port), timeout=seconds).close()
            outcome.append(None)
        except OSError as error:
            outcome.append(f"{host}: {error.strerror or error}")

    probe = threading.Thread(target=connect, daemon=True)  # a name lookup may hang longer than any timeout given it
    probe.start()
    probe.join(seconds)
    return outcome[0] if outcome else f"{host}: no answer within {seconds:g} s"


def _load_files(args: DataArguments) -> tuple[dict[str, RawSplit], list[str] | None, str]:
    columns = Columns(
        tuple(args.text_column or ["text"]),
        args.label_column or "label",
        args.text_pair_column,
        tuple(args.label_columns or ()),
    )
    paths = {"train": args.train_file, "validation": args.validation_file, "test": args.test_file}
    raw = {split: _read_split(Path(path), columns) for split, path in paths.items() if path}
    labels = read_labels_file(Path(args.labels_file)) if args.labels_file else None
    return raw, list(args.label_columns) if args.label_columns else labels, f"files ({args.train_file})"


def read_labels_file(path: Path) -> list[str]:
    """Class names, one per line, in label-id order."""
    check_file(path, "Labels file")
    labels = [line.strip() for line in read_text(path).splitlines() if line.strip()]
    if len(labels) < 2:
        raise DataError(f"Labels file {path} names {len(labels)} class(es); a classifier needs at least 2.")
    if len(set(labels)) != len(labels):
        raise DataError(f"Labels file {path} repeats a class name; give each class once.")
    return labels


def _read_split(path: Path, columns: Columns) -> RawSplit:
    return _frame_to_split(read_table(path), columns, str(path))


def _frame_to_split(frame: pd.DataFrame, columns: Columns, origin: str) -> RawSplit:
    """The rows of `frame` with a text (and, for a pair task, a second text); the others are dropped and listed."""
    if frame.empty:
        raise DataError(f"{origin} has no rows; it needs at least one example.")
    present = [str(c) for c in frame.columns]
    wanted = [(name, "--text-column") for name in columns.text]
    wanted += [(columns.text_pair, "--text-pair-column")] if columns.text_pair else []
    wanted += [(name, "--label-columns") for name in columns.label_columns] or [(columns.label, "--label-column")]
    for name, flag in wanted:
        if name not in present:
            raise DataError(
                f"{origin} has no column {name!r}. Its columns are: {', '.join(present)}. Choose with {flag}."
            )
    parts = [frame[c].to_numpy(dtype=object) for c in columns.text]
    second = frame[columns.text_pair].to_numpy(dtype=object) if columns.text_pair else None
    texts, pairs, keep, dropped = [], [], [], []
    for row in range(len(frame)):
        values = [as_text(p[row]) for p in parts]
        text = " ".join(v for v in values if v)
        pair = as_text(second[row]) if second is not None else None
        if text.strip() and (pair is None or pair.strip()):
            texts.append(text)
            pairs.append(pair)
            keep.append(row)
        else:
            dropped.append(row + 1)
    what = "text" if second is None else f"text or second text ({columns.text_pair})"
    if dropped:
        logger.warning(
            "%s: dropped %d row(s) with empty or missing %s (%s).", origin, len(dropped), what, rows_named(dropped)
        )
    if not texts:
        named = [*columns.text, *([columns.text_pair] if columns.text_pair else [])]
        raise DataError(f"{origin}: every row has empty or missing text in column(s) {', '.join(named)}.")
    if columns.label_columns:
        cells = [frame[c].to_numpy(dtype=object) for c in columns.label_columns]
        labels = [tuple(cell[row] for cell in cells) for row in keep]
    else:
        cells = frame[columns.label].to_numpy(dtype=object)
        labels = [cells[row] for row in keep]
    return RawSplit(texts, pairs if second is not None else None, labels, origin, [row + 1 for row in keep], columns)


def rows_named(rows: list[int]) -> str:
    """Data rows (1-based, the header not counted) for a message: the first `LISTED_ROWS`, then how many more.

    >>> rows_named([3, 9])
    'data rows 3, 9'
    >>> rows_named(list(range(1, 14)))
    'data rows 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 3 more'
    """
    shown = ", ".join(map(str, rows[:LISTED_ROWS]))
    more = f" and {len(rows) - LISTED_ROWS} more" if len(rows) > LISTED_ROWS else ""
    return f"data row{'s' if len(rows) > 1 else ''} {shown}{more}"


def as_text(value: object) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    return str(value)


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


# --- labels ----------------------------------------------------------------------------------------------


def _blank(value: object) -> bool:
    """A missing label: None, NaN, an empty string, or a list (or label-columns row) of nothing but those."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return all(_blank(item) for item in value)
    return _as_label(value) is None


def _is_unlabelled(split: RawSplit) -> bool:
    """The hub's GLUE test sets carry -1 for every label; such a split counts as absent."""
    return all(_blank(value) or _as_label(value) == -1 for value in split.labels)


def _map_labels(
    raw: dict[str, RawSplit], labels: list[str] | None, problem: str, separator: str
) -> tuple[dict[str, datasets.Dataset], list[str]]:
    """Each split as a Dataset of `text` (`text_pair`) and `label` in the kind's form, and the label names."""
    for name in list(raw):
        if _is_unlabelled(raw[name]):
            if name == "train":
                raise DataError(f"{raw[name].origin}: the train split has no labels.")
            logger.info("%s has no labels; treating the %s split as absent.", raw[name].origin, name)
            del raw[name]
    if problem == SINGLE_LABEL:
        targets, labels = _class_ids(raw, labels, separator)
        feature = datasets.ClassLabel(names=labels)
    elif problem == MULTI_LABEL:
        targets, labels = _multi_hot(raw, labels, separator)
        feature = datasets.List(datasets.Value("float32"), length=len(labels))
    else:
        targets = {
            name: [_number(v, row, split, name) for row, v in zip(split.rows, split.labels)]
            for name, split in raw.items()
        }
        labels, feature = [], datasets.Value("float32")
    pairs = raw["train"].pairs is not None
    features = datasets.Features(
        {"text": datasets.Value("string"), **({PAIR: datasets.Value("string")} if pairs else {}), "label": feature}
    )
    splits = {}
    for name, split in raw.items():
        columns = {"text": split.texts, **({PAIR: split.pairs} if pairs else {}), "label": targets[name]}
        splits[name] = datasets.Dataset.from_dict(columns, features=features)
    return splits, labels


def _class_ids(raw: dict[str, RawSplit], labels: list[str] | None, separator: str) -> tuple[dict, list[str]]:
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


def _multi_hot(raw: dict[str, RawSplit], labels: list[str] | None, separator: str) -> tuple[dict, list[str]]:
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


# --- splitting -------------------------------------------------------------------------------------------


def carve_missing_splits(
    splits: dict[str, Any], seed: int, hold_out: Callable[[Any, int, int], tuple[Any, Any]], unit: str
) -> tuple[dict[str, Any], list[str]]:
    """Fills in a missing validation or test split with `hold_out(train, size, seed) -> (rest, held)`, 10% of
    train each (validation first, seeded with `seed`, then test with `seed + 1`); returns the splits in
    `SPLITS` order and the names carved. `unit` names the rows in messages ("training pairs")."""
    if "train" not in splits:
        raise DataError("No train split was found; pass --train-file or a task whose mirror has a train file.")
    carved = [name for name in ("validation", "test") if name not in splits]
    train = splits["train"]
    for offset, name in enumerate(carved):
        if len(train) < 10:
            raise DataError(
                f"The train split has {len(train)} {unit.split()[-1]}, too few to hold out a {name} split; "
                f"pass --{name}-file or more training data."
            )
        train, splits[name] = hold_out(train, max(1, round(len(train) * HELD_OUT_FRACTION)), seed + offset)
        logger.info("No %s split given: held out %d %s.", name, len(splits[name]), unit)
    splits["train"] = train
    return {name: splits[name] for name in SPLITS}, carved


def _hold_out(split: datasets.Dataset, size: int, seed: int) -> tuple[datasets.Dataset, datasets.Dataset]:
    """Splits off `size` rows, seeded: keeping class proportions for a single label when every class has two rows
    or more, else at random (multi-label and regression rows too)."""
    stratify = None
    if isinstance(split.features["label"], datasets.ClassLabel):
        labels = np.asarray(column(split, "label"))
        _, counts = np.unique(labels, return_counts=True)
        stratify = labels if counts.min() >= 2 and size >= len(counts) else None
    keep, held = train_test_split(np.arange(len(split)), test_size=size, random_state=seed, stratify=stratify)
    return split.select(np.sort(keep)), split.select(np.sort(held))


def stratified_subset(split: datasets.Dataset, size: int, seed: int) -> datasets.Dataset:
    """A seeded subset of `size` rows in the split's order, whose class proportions follow the split's for a single
    label (a random one for the other kinds)."""
    if size >= len(split):
        return split
    _, subset = _hold_out(split, size, seed)
    return subset


def _check_train(data: TaskData) -> None:
    rows = len(data.splits["train"])
    if data.problem_type == REGRESSION:
        values = data.targets("train")
        if values.min() == values.max():
            raise DataError(
                f"Every label of the train split is {float(values[0]):g} ({rows} rows); a regression model needs "
                "values that vary."
            )
        return
    if data.problem_type == MULTI_LABEL:
        if len(data.labels) < 2:
            raise DataError(
                f"The data names {len(data.labels)} label(s) ({', '.join(data.labels)}); multi-label data needs at "
                "least two. For one yes/no label per text use the default --problem with --label-column."
            )
        if not data.targets("train").any():
            raise DataError(f"No row of the train split has any label ({rows} rows); a model cannot learn them.")
        return
    present = set(data.label_ids("train").tolist())
    if len(present) < 2:
        only = data.labels[present.pop()] if present else "none"
        raise DataError(
            f"The train split holds one class only ({only!r}) in {rows} rows; "
            "a classifier needs examples of at least two classes."
        )
