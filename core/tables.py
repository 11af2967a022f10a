"""Reading a user's data files into pandas frames of text: every supported format, with errors that name the
file, the line or the problem and say what to do."""

from __future__ import annotations

import csv
import json
import logging
import sys
import warnings
from pathlib import Path

import pandas as pd

from core.errors import UserError

logger = logging.getLogger(__name__)

CSV_SEPARATORS = (";", "\t", "|")  # tried in this order when a .csv header holds no comma
READERS = {".csv": "csv", ".tsv": "tsv", ".json": "json", ".jsonl": "jsonl", ".parquet": "parquet"}


class DataError(UserError):
    """Input data that cannot be used, with a message that says what to change."""


def read_text(path: Path) -> str:
    """The whole file as text (UTF-8, a byte-order mark dropped)."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise DataError(f"{path} is not UTF-8 ({error.reason} at byte {error.start}); re-save it as UTF-8.") from None


def check_file(path: Path, what: str = "Data file") -> None:
    """Raises `DataError` unless `path` is a file, saying whether it is a directory or missing."""
    if path.is_dir():
        raise DataError(f"{what} {path} is a directory, not a file; give the file itself.")
    if not path.is_file():
        raise DataError(f"{what} {path} does not exist.")


def read_table(path: Path) -> pd.DataFrame:
    """A `.csv` (comma, else semicolon, tab or bar), `.tsv`, `.json`, `.jsonl` or `.parquet` file as a frame."""
    check_file(path)
    kind = READERS.get(path.suffix.lower())
    if kind is None:
        raise DataError(f"{path}: unsupported file type {path.suffix!r}; use one of {', '.join(READERS)}.")
    if path.stat().st_size == 0:
        raise DataError(f"{path} is empty; it needs a header row and at least one example.")
    try:
        if kind in ("csv", "tsv"):
            return read_delimited(path, _separator(path) if kind == "csv" else "\t")
        if kind == "parquet":
            return pd.read_parquet(path)
        return pd.read_json(path, lines=kind == "jsonl", dtype=False, encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise DataError(f"{path} is not UTF-8 ({error.reason} at byte {error.start}); re-save it as UTF-8.") from None
    except pd.errors.EmptyDataError:
        raise DataError(f"{path} is empty; it needs a header row and at least one example.") from None
    except DataError:
        raise
    except ValueError as error:
        if kind in ("json", "jsonl"):
            check_json(path, lines=kind == "jsonl")
        raise DataError(f"{path} could not be read as {kind}: {error}") from None


def check_json(path: Path, lines: bool) -> None:
    """Raises `DataError` naming the line and column where a JSON (with `lines`, JSON Lines) file stops being valid,
    or the JSON Lines row that is not an object; returns when the json module reads the file."""
    text = read_text(path)
    documents = enumerate(text.splitlines(), start=1) if lines else [(1, text)]
    for first_line, document in documents:
        if lines and not document.strip():
            continue
        try:
            value = json.loads(document)
        except json.JSONDecodeError as error:
            line = first_line + error.lineno - 1
            raise DataError(
                f"{path}, line {line}, column {error.colno}: not valid JSON ({error.msg}); fix that line."
            ) from None
        if lines and not isinstance(value, dict):
            raise DataError(
                f"{path}, line {first_line}: a JSON Lines row must be an object of column values, like "
                '{"text": "...", "label": "..."}.'
            )


def read_delimited(path: Path, sep: str, quoting: int = csv.QUOTE_MINIMAL) -> pd.DataFrame:
    """A delimited text file as text columns, every row held to the header's fields.

    A row with more fields than the header is an error naming its line (pandas alone would take a first row
    like that as holding an index, and shift every field of the file one column left).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error", pd.errors.ParserWarning)
        try:
            return pd.read_csv(
                path,
                sep=sep,
                quoting=quoting,
                encoding="utf-8-sig",
                dtype=object,
                keep_default_na=False,
                index_col=False,
            )
        except (pd.errors.ParserWarning, pd.errors.ParserError) as error:
            failure = error
    line, header, problem = _first_bad_record(path, sep, quoting)
    if line is None:
        raise failure if isinstance(failure, ValueError) else DataError(f"{path} could not be read: {failure}")
    if problem is None:
        fix = "remove the extra separators" if quoting == csv.QUOTE_NONE else "quote the fields that hold it"
        raise DataError(
            f"{path}, line {line}: more fields than the header's {len(header)} ({', '.join(header)}); a field holds "
            f"the separator {sep!r}: {fix}."
        )
    if "end of data" in problem:
        raise DataError(
            f'{path}, line {line}: a quoted field that begins on this line is never closed; add its closing ".'
        )
    raise DataError(f"{path}, line {line}: {problem}.")


def _first_bad_record(path: Path, sep: str, quoting: int) -> tuple[int | None, list[str], str | None]:
    """The first record that pandas could not read, read again with the csv module: (its first line, the header,
    the csv module's error or None for a record with more fields than the header); (None, header, None) when
    every record reads."""
    limit = csv.field_size_limit()
    csv.field_size_limit(sys.maxsize)  # an unclosed quote makes one field of the rest of the file
    try:
        with open(path, encoding="utf-8-sig", newline="") as file:
            rows = csv.reader(file, delimiter=sep, quoting=quoting, strict=True)
            header: list[str] = []
            start = 1
            try:
                header = next(rows, [])
                start = rows.line_num + 1
                for row in rows:
                    if len(row) > len(header):
                        return start, header, None
                    start = rows.line_num + 1
            except csv.Error as error:
                return start, header, str(error)
    finally:
        csv.field_size_limit(limit)
    return None, header, None


def _separator(path: Path) -> str:
    """The field separator of a .csv file, from its header line: a comma, else a semicolon, tab or bar.

    Spreadsheets in many locales save "CSV" with semicolons; the header (column names) tells them apart.
    """
    with path.open(encoding="utf-8-sig", newline="") as handle:
        header = handle.readline()
    if "," in header:
        return ","
    for sep in CSV_SEPARATORS:
        if sep in header:
            logger.info("%s: the header has no comma; reading it as %r-separated.", path, sep)
            return sep
    return ","
