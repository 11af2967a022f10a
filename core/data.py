"""One place that turns a task or a user's files into the splits both sides train on.

Every split comes out as a `datasets.Dataset` with two columns, `text` (str) and `label` (a `ClassLabel`
holding the class names), together with a SHA-256 fingerprint per split so that a run records exactly
what it saw and compare can refuse runs that saw different data.
"""

from __future__ import annotations

import functools
import hashlib
import logging
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
from core.tasks import DATA_DIR_ENV, get_task, where_mirrors_were_sought

logger = logging.getLogger(__name__)

SPLITS = ("train", "validation", "test")
HELD_OUT_FRACTION = 0.1
HUB_CHECK_SECONDS = 5  # how long to wait for the hub to answer before calling it unreachable
PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")
LISTED_ROWS = 10  # rows named in a message about dropped rows; the rest are counted


@dataclass
class RawSplit:
    """A split before label mapping: one text per row, the raw label value per row (None when unlabelled)."""

    texts: list[str]
    labels: list[object]
    origin: str  # a file path or "hub:<id>/<split>", for messages
    rows: list[int]  # each kept row's number among the source's data rows (1-based), for messages


@dataclass
class TaskData:
    """The splits of one task, label names and fingerprints; what both sides train on."""

    splits: datasets.DatasetDict
    labels: list[str]
    source: str
    carved: list[str] = field(default_factory=list)

    @functools.cached_property
    def fingerprints(self) -> dict[str, str]:
        """SHA-256 of each split, computed once per TaskData (the splits never change after loading)."""
        return {name: fingerprint(split, self.labels) for name, split in self.splits.items()}

    def texts(self, split: str) -> list[str]:
        return column(self.splits[split], "text")

    def label_ids(self, split: str) -> np.ndarray:
        return np.asarray(column(self.splits[split], "label"), dtype=np.int64)

    def describe(self, args: DataArguments) -> dict:
        """The `data` section of run.json."""
        return {
            "options": args.to_dict(),
            "source": self.source,
            "labels": list(self.labels),
            "splits": {name: len(split) for name, split in self.splits.items()},
            "carved_from_train": list(self.carved),
            "fingerprints": self.fingerprints,
            "leakage": self.leakage,
        }

    @functools.cached_property
    def leakage(self) -> dict[str, int]:
        """How many validation and test texts also occur as a train text, counted once per TaskData."""
        return leakage(self.texts("train"), {name: self.texts(name) for name in ("validation", "test")})


def leakage(train: list[str], others: dict[str, list[str]]) -> dict[str, int]:
    """For each split of `others`, how many of its items (texts, or translation sources) also occur in `train`."""
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
    """SHA-256 over the split's rows in order (text, tab, label name, newline)."""
    digest = hashlib.sha256()
    for text, label in zip(column(split, "text"), column(split, "label")):
        digest.update(f"{text}\t{labels[label]}\n".encode())
    return digest.hexdigest()


def load_task(args: DataArguments) -> TaskData:
    """Loads the task or files named by `args` into identical, fingerprinted splits.

    Raises:
        DataError: with the file, column, row or value at fault and what to do instead.
    """
    if args.task is not None:
        raw, labels, source = _load_named_task(args)
    else:
        raw, labels, source = _load_files(args)
    splits, labels = _map_labels(raw, labels)
    splits, carved = carve_missing_splits(splits, args.seed, _stratified_split, "stratified training rows")
    if args.max_train_samples is not None and args.max_train_samples < len(splits["train"]):
        splits["train"] = stratified_subset(splits["train"], args.max_train_samples, args.seed)
    data = TaskData(datasets.DatasetDict(splits), labels, source, carved)
    _check_train(data)
    log_leakage(data.leakage, {name: len(split) for name, split in data.splits.items()}, "texts")
    logger.info(
        "Loaded %s: %s; labels %s",
        source,
        ", ".join(f"{name} {len(split):,}" for name, split in data.splits.items()),
        labels,
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
                split: _read_split(folder / f"{split}.csv", ["text"], "label")
                for split in SPLITS
                if (folder / f"{split}.csv").is_file()
            }
            labels_path = folder / "labels.txt"
            labels = read_labels_file(labels_path) if labels_path.is_file() else list(spec.labels)
            return raw, labels, f"{spec.name} (local mirror {folder})"
        logger.info("No local mirror of %s under %s; loading it from the hub.", spec.name, args.data_dir)
    text_columns = args.text_column or list(spec.text_columns)
    label_column = args.label_column or spec.label_column
    mirror = (
        f"point --data-dir (or {DATA_DIR_ENV}) at a folder holding {spec.name}/train.csv, validation.csv, test.csv "
        "(columns text,label) and labels.txt, or pass your files with --train-file"
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
            raw[split] = _frame_to_split(frame, text_columns, label_column, f"hub:{spec.hub_id}/{split}")
    return raw, list(spec.labels), f"{spec.name} (hub {spec.hub_id})"


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
    text_columns = args.text_column or ["text"]
    label_column = args.label_column or "label"
    paths = {"train": args.train_file, "validation": args.validation_file, "test": args.test_file}
    raw = {split: _read_split(Path(path), text_columns, label_column) for split, path in paths.items() if path}
    labels = read_labels_file(Path(args.labels_file)) if args.labels_file else None
    return raw, labels, f"files ({args.train_file})"


def read_labels_file(path: Path) -> list[str]:
    """Class names, one per line, in label-id order."""
    check_file(path, "Labels file")
    labels = [line.strip() for line in read_text(path).splitlines() if line.strip()]
    if len(labels) < 2:
        raise DataError(f"Labels file {path} names {len(labels)} class(es); a classifier needs at least 2.")
    if len(set(labels)) != len(labels):
        raise DataError(f"Labels file {path} repeats a class name; give each class once.")
    return labels


def _read_split(path: Path, text_columns: list[str], label_column: str) -> RawSplit:
    return _frame_to_split(read_table(path), text_columns, label_column, str(path))


def _frame_to_split(frame: pd.DataFrame, text_columns: list[str], label_column: str, origin: str) -> RawSplit:
    if frame.empty:
        raise DataError(f"{origin} has no rows; it needs at least one example.")
    columns = [str(c) for c in frame.columns]
    for column in [*text_columns, label_column]:
        if column not in columns:
            raise DataError(
                f"{origin} has no column {column!r}. Its columns are: {', '.join(columns)}. "
                "Choose with --text-column and --label-column."
            )
    parts = [frame[c].to_numpy(dtype=object) for c in text_columns]
    texts, keep, dropped = [], [], []
    for row in range(len(frame)):
        values = [as_text(p[row]) for p in parts]
        text = " ".join(v for v in values if v)
        if text.strip():
            texts.append(text)
            keep.append(row)
        else:
            dropped.append(row + 1)
    if dropped:
        logger.warning(
            "%s: dropped %d row(s) with empty or missing text (%s).", origin, len(dropped), rows_named(dropped)
        )
    if not texts:
        raise DataError(f"{origin}: every row has empty or missing text in column(s) {', '.join(text_columns)}.")
    raw_labels = frame[label_column].to_numpy(dtype=object)
    labels = [_as_label(raw_labels[row]) for row in keep]
    return RawSplit(texts, labels, origin, [row + 1 for row in keep])


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


def _is_unlabelled(split: RawSplit) -> bool:
    """The hub's GLUE test sets carry -1 for every label; such a split counts as absent."""
    return all(label is None or label == -1 for label in split.labels)


def _map_labels(raw: dict[str, RawSplit], labels: list[str] | None) -> tuple[dict[str, datasets.Dataset], list[str]]:
    if "train" not in raw:
        raise DataError("No train split was found; pass --train-file or a task whose mirror has train.csv.")
    for name in list(raw):
        if _is_unlabelled(raw[name]):
            if name == "train":
                raise DataError(f"{raw[name].origin}: the train split has no labels.")
            logger.info("%s has no labels; treating the %s split as absent.", raw[name].origin, name)
            del raw[name]
    if labels is None:
        labels = _labels_from_train(raw["train"])
    index = {name: i for i, name in enumerate(labels)}
    features = datasets.Features({"text": datasets.Value("string"), "label": datasets.ClassLabel(names=labels)})
    splits = {}
    for name, split in raw.items():
        ids = [_label_id(value, row, split, name, labels, index) for row, value in zip(split.rows, split.labels)]
        splits[name] = datasets.Dataset.from_dict({"text": split.texts, "label": ids}, features=features)
    seen = set(column(splits["train"], "label"))
    for name in ("validation", "test"):
        if name in splits:
            unseen = sorted(set(column(splits[name], "label")) - seen)
            if unseen:
                raise DataError(
                    f"{raw[name].origin}: the {name} split has label {labels[unseen[0]]!r}, which the train "
                    "split never has; a model cannot learn it. Add training examples of it or remove it."
                )
    return splits, labels


def _labels_from_train(train: RawSplit) -> list[str]:
    values = {v for v in train.labels if v is not None}
    if all(isinstance(v, int) for v in values):
        return [str(v) for v in sorted(values)]
    return sorted(str(v) for v in values)


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


def _stratified_split(split: datasets.Dataset, size: int, seed: int) -> tuple[datasets.Dataset, datasets.Dataset]:
    """Splits off `size` rows, keeping class proportions when every class has two rows or more."""
    labels = np.asarray(column(split, "label"))
    _, counts = np.unique(labels, return_counts=True)
    stratify = labels if counts.min() >= 2 and size >= len(counts) else None
    keep, held = train_test_split(np.arange(len(split)), test_size=size, random_state=seed, stratify=stratify)
    return split.select(np.sort(keep)), split.select(np.sort(held))


def stratified_subset(split: datasets.Dataset, size: int, seed: int) -> datasets.Dataset:
    """A seeded subset of `size` rows whose class proportions follow the split's, in the split's order."""
    if size >= len(split):
        return split
    _, subset = _stratified_split(split, size, seed)
    return subset


def _check_train(data: TaskData) -> None:
    present = set(data.label_ids("train").tolist())
    if len(present) < 2:
        only = data.labels[present.pop()] if present else "none"
        raise DataError(
            f"The train split holds one class only ({only!r}) in {len(data.splits['train'])} rows; "
            "a classifier needs examples of at least two classes."
        )
