"""From a task's name or a user's files to raw splits: each kept row's text (and second text) and its label cell.

A named task is read from its local mirror (`docs/formats.md`), else from the Hugging Face hub when it can be
reached; files are read in any format `core.tables.read_table` knows. Rows with no text are dropped and listed;
a missing column is refused with the columns the file has. `core.labels` then maps the label cells by kind.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

import datasets
import numpy as np
import pandas as pd

from core.args import DataArguments
from core.tables import DataError, check_file, read_table, read_text
from core.tasks import DATA_DIR_ENV, SPLITS, Columns, TaskSpec, get_task, where_mirrors_were_sought

logger = logging.getLogger(__name__)

HUB_CHECK_SECONDS = 5  # how long to wait for the hub to answer before calling it unreachable
PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")
LISTED_ROWS = 10  # rows named in a message about dropped rows; the rest are counted


@dataclass
class RawSplit:
    """A split before label mapping: the text (and second text) of each kept row, and its raw label cell(s)."""

    texts: list[str]
    pairs: list[str] | None  # the second texts of a pair task, else None
    labels: list[object]  # the label column's cell per row; with `columns.label_columns`, a tuple of the row's cells
    origin: str  # a file path or "hub:<id>/<split>", for messages
    rows: list[int]  # each kept row's number among the source's data rows (1-based), for messages
    columns: Columns  # where the rows were read from, for messages


def read_task(args: DataArguments) -> tuple[dict[str, RawSplit], list[str] | None, str]:
    """A named task's raw splits, its label names and a description of where they came from."""
    try:
        spec = get_task(args.task)
    except ValueError as error:
        raise DataError(str(error)) from None
    if args.data_dir:
        folder = Path(args.data_dir) / spec.folder
        if (folder / "train.csv").is_file():
            raw = {
                split: _read_split(folder / f"{split}.csv", spec.mirror_columns)
                for split in SPLITS
                if (folder / f"{split}.csv").is_file()
            }
            labels_path = folder / "labels.txt"
            labels = read_labels_file(labels_path) if labels_path.is_file() and spec.labels else list(spec.labels)
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
        f"point --data-dir (or {DATA_DIR_ENV}) at a folder holding {spec.folder}/train.csv, validation.csv, test.csv "
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


def read_files(args: DataArguments) -> tuple[dict[str, RawSplit], list[str] | None, str]:
    """The raw splits of the files `args` names, their label names (None: from train) and where they came from."""
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
