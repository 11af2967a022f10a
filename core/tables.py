"""Reading a user's data files into pandas frames of text: every supported format, with errors that name the
file, the line or the problem and say what to do."""

from __future__ import annotations

import csv
import logging
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


def read_table(path: Path) -> pd.DataFrame:
    """A `.csv` (comma, else semicolon, tab or bar), `.tsv`, `.json`, `.jsonl` or `.parquet` file as a frame."""
    if not path.is_file():
        raise DataError(f"Data file {path} does not exist.")
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
        raise DataError(f"{path} could not be read as {kind}: {error}") from None


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
    try:
        with open(path, encoding="utf-8-sig", newline="") as file:
            rows = csv.reader(file, delimiter=sep, quoting=quoting)
            header = next(rows, [])
            line = next((rows.line_num for row in rows if len(row) > len(header)), None)
    except csv.Error:  # a field longer than the csv module reads: pandas' own message stands
        line = None
    if line is None:
        raise failure if isinstance(failure, ValueError) else DataError(f"{path} could not be read: {failure}")
    fix = "remove the extra separators" if quoting == csv.QUOTE_NONE else "quote the fields that hold it"
    raise DataError(
        f"{path}, line {line}: more fields than the header's {len(header)} ({', '.join(header)}); a field holds the "
        f"separator {sep!r}: {fix}."
    )


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
