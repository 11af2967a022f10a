"""Parallel text for translation: a named task or a user's files, cut into fingerprinted splits.

The translation counterpart of `core.data`: the same file formats, split rules (a missing validation or
test split is carved from train, 10%, seeded), `--max-train-samples`, SHA-256 fingerprints per split and a
leakage count, with a source and a target column (and optionally a domain column) instead of text and label.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from core.args import PairDataArguments
from core.data import carve_missing_splits, leakage, log_leakage
from core.reading import as_text, rows_named
from core.tables import DataError, check_file, read_delimited, read_table
from core.tasks import DATA_DIR_ENV, PAIR_TASKS, SPLITS, where_mirrors_were_sought

logger = logging.getLogger(__name__)

CHUNK = 4096  # texts tokenised at a time when counting pieces


def language_pair(options: dict, given: str | None = None) -> str | None:
    """`src-tgt` of the data: `given`, else `pt-en` for the task pt_en, else the columns when they are
    two-letter language codes (`pt`/`en`), else None (unknown)."""
    if given:
        return given.lower()
    if options.get("task") in PAIR_TASKS:
        spec = PAIR_TASKS[options["task"]]
        return f"{spec.source_column}-{spec.target_column}"
    source, target = (str(options.get(k) or "").lower() for k in ("source_column", "target_column"))
    if len(source) == 2 and len(target) == 2 and source.isalpha() and target.isalpha():
        return f"{source}-{target}"
    return None


@dataclass
class PairSplit:
    """Aligned sentence pairs; `domains` is None when the data names no domain."""

    sources: list[str]
    targets: list[str]
    domains: list[str] | None = None

    def __len__(self) -> int:
        return len(self.sources)

    def select(self, rows: np.ndarray) -> PairSplit:
        pick = [int(i) for i in rows]
        domains = None if self.domains is None else [self.domains[i] for i in pick]
        return PairSplit([self.sources[i] for i in pick], [self.targets[i] for i in pick], domains)

    def fingerprint(self) -> str:
        """SHA-256 over the rows in order (source, tab, target[, tab, domain], newline)."""
        digest = hashlib.sha256()
        for row in range(len(self)):
            domain = "" if self.domains is None else f"\t{self.domains[row]}"
            digest.update(f"{self.sources[row]}\t{self.targets[row]}{domain}\n".encode())
        return digest.hexdigest()


@dataclass
class PairData:
    """The splits of one translation task, where they came from, and which were carved from train."""

    splits: dict[str, PairSplit]
    source: str
    columns: dict[str, str | None]
    carved: list[str] = field(default_factory=list)
    truncated: dict[str, dict[str, int]] | None = None  # per split, what `count_cut` found

    @property
    def fingerprints(self) -> dict[str, str]:
        return {name: split.fingerprint() for name, split in self.splits.items()}

    @functools.cached_property
    def leakage(self) -> dict[str, int]:
        """How many validation and test sources also occur as a train source, counted once per PairData."""
        return leakage(
            self.splits["train"].sources, {name: self.splits[name].sources for name in ("validation", "test")}
        )

    def count_cut(self, pieces: Callable[[list[str]], Sequence[int]], max_length: int) -> dict[str, dict[str, int]]:
        """Counts, per split, the sources and targets that `--max-length` cuts; logs them and keeps them for
        `describe` (run.json `data.truncated`).

        Args:
            pieces: each text's number of subword pieces, by the run's tokenizer.
            max_length: the most tokens a source or target keeps, its end (or start) id included, so a text of
                more than `max_length - 1` pieces is cut.
        Returns:
            {split: {"sources": cut, "targets": cut, "longest_source": pieces, "longest_target": pieces}}.
        """
        self.truncated = {}
        for name, split in self.splits.items():
            counts: dict[str, int] = {}
            for side, texts in (("source", split.sources), ("target", split.targets)):
                lengths = np.concatenate(
                    [np.asarray(pieces(texts[i : i + CHUNK]), np.int64) for i in range(0, len(texts), CHUNK)]
                )
                counts[f"{side}s"] = int(np.sum(lengths > max_length - 1))
                counts[f"longest_{side}"] = int(lengths.max()) if len(lengths) else 0
            self.truncated[name] = counts
            if counts["sources"] or counts["targets"]:
                logger.warning(
                    "%s: %d of %d sources and %d of %d targets are longer than --max-length %d tokens and were cut "
                    "(the longest source has %d pieces, the longest target %d).",
                    name,
                    counts["sources"],
                    len(split),
                    counts["targets"],
                    len(split),
                    max_length,
                    counts["longest_source"],
                    counts["longest_target"],
                )
        return self.truncated

    def describe(self, args: PairDataArguments) -> dict:
        """The `data` section of run.json (with `truncated` once `count_cut` has counted)."""
        return {
            "options": args.to_dict(),
            "source": self.source,
            "columns": dict(self.columns),
            "labels": [],
            "splits": {name: len(split) for name, split in self.splits.items()},
            "carved_from_train": list(self.carved),
            "fingerprints": self.fingerprints,
            "leakage": self.leakage,
            **({"truncated": self.truncated} if self.truncated is not None else {}),
        }


def load_pairs(args: PairDataArguments) -> PairData:
    """Loads the task or files named by `args` into complete, fingerprinted splits.

    Raises:
        DataError: with the file, column or value at fault and what to do instead.
    """
    if args.task is not None:
        spec = PAIR_TASKS[args.task]
        if not args.data_dir:
            raise DataError(
                f"Task {spec.name!r} is read from a local mirror, and none was found "
                f"{where_mirrors_were_sought(args.data_dir)}; pass --data-dir (or set {DATA_DIR_ENV}) to a folder "
                f"holding {spec.name}/train.tsv, validation.tsv and test.tsv."
            )
        folder = Path(args.data_dir) / spec.name
        if not (folder / "train.tsv").is_file():
            raise DataError(f"No {spec.name} mirror under {args.data_dir}: {folder / 'train.tsv'} does not exist.")
        columns = {"source": spec.source_column, "target": spec.target_column, "domain": spec.domain_column}
        paths = {split: folder / f"{split}.tsv" for split in SPLITS if (folder / f"{split}.tsv").is_file()}
        origin = f"{spec.name} (local mirror {folder})"
    else:
        columns = {"source": args.source_column, "target": args.target_column, "domain": args.domain_column}
        given = {"train": args.train_file, "validation": args.validation_file, "test": args.test_file}
        paths = {split: Path(path) for split, path in given.items() if path}
        origin = f"files ({args.train_file})"
    splits = {split: read_pairs(path, **columns) for split, path in paths.items()}
    splits, carved = _complete_splits(splits, args.seed)
    if args.max_train_samples is not None and args.max_train_samples < len(splits["train"]):
        rng = np.random.default_rng(args.seed)
        splits["train"] = splits["train"].select(
            np.sort(rng.choice(len(splits["train"]), args.max_train_samples, replace=False))
        )
    data = PairData(splits, origin, columns, carved)
    log_leakage(data.leakage, {name: len(split) for name, split in splits.items()}, "sources")
    logger.info("Loaded %s: %s", origin, ", ".join(f"{name} {len(split):,}" for name, split in splits.items()))
    return data


def read_pairs(path: Path, source: str, target: str, domain: str | None = None) -> PairSplit:
    """Reads one file of pairs, dropping (and counting) rows whose source or target is empty."""
    frame = _read_tsv(path) if path.suffix.lower() == ".tsv" else read_table(path)
    present = [str(c) for c in frame.columns]
    for flag, column in (("--source-column", source), ("--target-column", target), ("--domain-column", domain)):
        if column is not None and column not in present:
            raise DataError(
                f"{path} has no column {column!r}. Its columns are: {', '.join(present)}. Choose with {flag}."
            )
    if frame.empty:
        raise DataError(f"{path} has no rows; it needs at least one sentence pair.")
    sources = [as_text(v) for v in frame[source].to_numpy(dtype=object)]
    targets = [as_text(v) for v in frame[target].to_numpy(dtype=object)]
    domains = None if domain is None else [as_text(v) for v in frame[domain].to_numpy(dtype=object)]
    keep = [row for row in range(len(frame)) if sources[row].strip() and targets[row].strip()]
    dropped = [row + 1 for row in range(len(frame)) if not (sources[row].strip() and targets[row].strip())]
    if not keep:
        raise DataError(f"{path}: every one of its {len(frame)} rows has an empty {source!r} or {target!r}.")
    if dropped:
        logger.warning(
            "%s: dropped %d row(s) with an empty %r or %r (%s).",
            path,
            len(dropped),
            source,
            target,
            rows_named(dropped),
        )
    return PairSplit(sources, targets, domains).select(np.asarray(keep))


def _read_tsv(path: Path) -> pd.DataFrame:
    """Tab-separated with no quoting: a field may begin with a quote character that is part of the text."""
    check_file(path)
    if path.stat().st_size == 0:
        raise DataError(f"{path} is empty; it needs a header row and at least one sentence pair.")
    try:
        return read_delimited(path, "\t", csv.QUOTE_NONE)
    except UnicodeDecodeError as error:
        raise DataError(f"{path} is not UTF-8 ({error.reason} at byte {error.start}); re-save it as UTF-8.") from None
    except pd.errors.EmptyDataError:
        raise DataError(f"{path} is empty; it needs a header row and at least one sentence pair.") from None
    except pd.errors.ParserError as error:
        raise DataError(f"{path} could not be read as tab-separated text: {error}") from None


def _complete_splits(splits: dict[str, PairSplit], seed: int) -> tuple[dict[str, PairSplit], list[str]]:
    """Carves missing validation and test splits out of train (10% each, seeded)."""
    return carve_missing_splits(splits, seed, _hold_out, "training pairs")


def _hold_out(train: PairSplit, size: int, seed: int) -> tuple[PairSplit, PairSplit]:
    keep, held = train_test_split(np.arange(len(train)), test_size=size, random_state=seed)
    return train.select(np.sort(keep)), train.select(np.sort(held))
