"""One place that turns a task or a user's files into the splits both sides train on.

Three kinds of problem (`core.kinds`, named by transformers' `problem_type`): one class per text
(`single_label_classification`), any number of labels per text (`multi_label_classification`) and a number per
text (`regression`); each with one text per example or, for a pair task, two. Every split is a `datasets.Dataset`
with a SHA-256 fingerprint, so that a run records exactly what it saw and compare can refuse runs that saw
different data. What `load_task` returns, a `TaskData`, is what both sides, compare and the app read:

- `kind`: the `core.kinds.Kind` object, which everything that differs by kind asks; `problem_type`: its name;
  `headline`: the name of the metric that ranks models of that kind (`"accuracy"`, `"macro_f1"`, `"spearman"`).
- `labels`: class (single label) or label (multi-label) names in id order; `[]` for regression. `num_outputs`:
  the numbers a model gives per example (transformers' `num_labels`): `len(labels)`, or 1 for regression.
- Each split's columns: `text` (str); `text_pair` (str) when `has_pairs` (`pair_column` names the column it came
  from, None without pairs); `label`: a `ClassLabel` id (single label), a multi-hot
  `List(Value("float32"), length=len(labels))` of 0.0 and 1.0 (multi-label), or a `Value("float32")` (regression).
- `texts(split)` and `text_pairs(split)` (None without pairs) as lists of str; `inputs(split)`, each row's text or
  its `(text, text_pair)`, the unit of leakage.
- `targets(split)`: the labels as an array: int64 `(n,)` class ids, float32 `(n, len(labels))` multi-hot, or
  float32 `(n,)` values. `label_ids(split)`: the int64 class ids of a single-label task (an error for the others).
- `reading`: how a text longer than the window is read (`core.long_text.Reading`, from `--long-text`).
- `fingerprints`, `leakage`, `carved`, `official_splits` (our split -> the official split it is, where the names
  differ: `--task stsb`'s test split is GLUE's validation split, whose scores are published, and its validation is
  carved from train), `source`, and `describe(args)`: the `data` section of run.json
  (`docs/formats.md`; for regression with `value_range`, the train split's smallest and largest value).

`core.reading` reads the rows, `core.labels` maps their labels by kind; this module fingerprints the splits, carves
the missing ones and checks what train holds.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import datasets
import numpy as np
from sklearn.model_selection import train_test_split

from core import kinds
from core.args import DataArguments
from core.kinds import Kind
from core.labels import map_labels
from core.long_text import DEFAULT_READING, Reading
from core.reading import read_files, read_task
from core.tables import DataError
from core.tasks import MIRROR_LABEL_SEPARATOR, PAIR, SPLITS, TaskSpec, get_task

logger = logging.getLogger(__name__)

HELD_OUT_FRACTION = 0.1
# A carved validation split holds at most this many rows, the rest staying in train: every validation of a large
# file costs its size again, and 10,000 rows already give a score within about a point (docs/results.md, "Budgets
# that let each model finish").
MAX_CARVED_VALIDATION = 10_000


@dataclass
class TaskData:
    """The splits of one task, its kind, label names and fingerprints; what both sides train on (the module
    docstring lists the interface)."""

    splits: datasets.DatasetDict
    labels: list[str]
    source: str
    carved: list[str] = field(default_factory=list)
    kind: Kind = field(default_factory=lambda: kinds.get(None))
    pair_column: str | None = None  # the column the second texts came from, for a pair task
    official_splits: dict[str, str] = field(default_factory=dict)  # our split -> the official one, where they differ
    reading: Reading = DEFAULT_READING  # how a text longer than the window is read (`--long-text`)

    @property
    def problem_type(self) -> str:
        """The kind's name (transformers' `problem_type`), as run.json stores it."""
        return self.kind.name

    @property
    def headline(self) -> str:
        """The metric that ranks models of this kind of task: accuracy, macro_f1 or spearman."""
        return self.kind.headline

    @property
    def has_pairs(self) -> bool:
        return self.pair_column is not None

    @property
    def num_outputs(self) -> int:
        """The numbers a model gives per example: one per class or label, one value for regression (transformers'
        `num_labels`)."""
        return self.kind.num_outputs(len(self.labels))

    @property
    def validation_capped(self) -> bool:
        """Whether the validation split was carved from train at its cap, `MAX_CARVED_VALIDATION` rows."""
        return "validation" in self.carved and len(self.splits["validation"]) == MAX_CARVED_VALIDATION

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
        return self.kind.targets(column(self.splits[split], "label"), len(self.labels))

    def label_ids(self, split: str) -> np.ndarray:
        """The class id of each row, int64 (n,); a single-label task's only (`targets` serves every kind)."""
        if not isinstance(self.splits[split].features["label"], datasets.ClassLabel):
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
            "problem_type": self.kind.name,
            "headline_metric": self.kind.headline,
            "text_pair_column": self.pair_column,
            "labels": list(self.labels),
            "splits": {name: len(split) for name, split in self.splits.items()},
            "carved_from_train": list(self.carved),
            **({"carved_validation_cap": MAX_CARVED_VALIDATION} if self.validation_capped else {}),
            **({"official_splits": dict(self.official_splits)} if self.official_splits else {}),
            "fingerprints": self.fingerprints,
            "leakage": self.leakage,
        }
        return {**record, **self.kind.data_record(self.targets("train"))}

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
    official: dict[str, str] = {}
    if args.task is not None:
        raw, labels, source = read_task(args)
        separator = MIRROR_LABEL_SEPARATOR
        raw, official = take_official_splits(raw, get_task(args.task))
    else:
        raw, labels, source = read_files(args)
        separator = args.label_separator
    if "train" not in raw:
        raise DataError("No train split was found; pass --train-file or a task whose mirror has train.csv.")
    pair_column = raw["train"].columns.text_pair
    kind = kinds.get(args.problem)
    splits, labels = map_labels(raw, labels, kind, separator)
    unit = "stratified training rows" if kind.stratify() else "training rows"
    hold_out = functools.partial(_hold_out, stratify=kind.stratify())
    splits, carved = carve_missing_splits(splits, args.seed, hold_out, unit)
    if args.max_train_samples is not None and args.max_train_samples < len(splits["train"]):
        splits["train"] = stratified_subset(splits["train"], args.max_train_samples, args.seed, kind.stratify())
    data = TaskData(datasets.DatasetDict(splits), labels, source, carved, kind, pair_column, official, args.reading)
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


# --- splitting -------------------------------------------------------------------------------------------


def take_official_splits(raw: dict[str, Any], spec: TaskSpec) -> tuple[dict[str, Any], dict[str, str]]:
    """A named task's raw splits with each taken from the official split it is (`TaskSpec.test_from`): where the
    labelled test split is hidden, the official validation split becomes the test split (the source's own test
    split, unlabelled, is dropped) and validation is left to be carved from train. Returns the splits and
    `spec.official_splits`."""
    official = spec.official_splits
    if not official:
        return raw, official
    if spec.test_from not in raw:
        raise DataError(
            f"Task {spec.name!r} takes its test split from the official {spec.test_from} split (its test labels are "
            f"hidden), and {raw['train'].origin} has no {spec.test_from} split beside it; give the mirror its "
            f"{spec.test_from}.csv."
        )
    kept = {name: split for name, split in raw.items() if name not in ("test", spec.test_from)}
    kept["test"] = raw[spec.test_from]
    logger.info(
        "%s: the official %s split is the test split; validation is carved from train.", spec.name, spec.test_from
    )
    return kept, official


def carve_missing_splits(
    splits: dict[str, Any], seed: int, hold_out: Callable[[Any, int, int], tuple[Any, Any]], unit: str
) -> tuple[dict[str, Any], list[str]]:
    """Fills in a missing validation or test split with `hold_out(train, size, seed) -> (rest, held)`, 10% of
    train each, validation at most `MAX_CARVED_VALIDATION` rows (validation first, seeded with `seed`, then test with
    `seed + 1`); returns the splits in
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
        size = max(1, round(len(train) * HELD_OUT_FRACTION))
        if name == "validation" and size > MAX_CARVED_VALIDATION:
            logger.info(
                "No validation split given: holding out %s %s, not 10%% (%s); the rest stays in train.",
                f"{MAX_CARVED_VALIDATION:,}",
                unit,
                f"{size:,}",
            )
            size = MAX_CARVED_VALIDATION
        train, splits[name] = hold_out(train, size, seed + offset)
        logger.info("No %s split given: held out %d %s.", name, len(splits[name]), unit)
    splits["train"] = train
    return {name: splits[name] for name in SPLITS}, carved


def _hold_out(
    split: datasets.Dataset, size: int, seed: int, stratify: bool = False
) -> tuple[datasets.Dataset, datasets.Dataset]:
    """Splits off `size` rows, seeded: with `stratify` (a kind whose `stratify()` says so, single label) keeping
    class proportions when every class has two rows or more, else at random (multi-label and regression rows too)."""
    by_class = None
    if stratify:
        labels = np.asarray(column(split, "label"))
        _, counts = np.unique(labels, return_counts=True)
        by_class = labels if counts.min() >= 2 and size >= len(counts) else None
    keep, held = train_test_split(np.arange(len(split)), test_size=size, random_state=seed, stratify=by_class)
    return split.select(np.sort(keep)), split.select(np.sort(held))


def stratified_subset(split: datasets.Dataset, size: int, seed: int, stratify: bool = False) -> datasets.Dataset:
    """A seeded subset of `size` rows in the split's order, whose class proportions follow the split's with
    `stratify` (a single label; a random one for the other kinds)."""
    if size >= len(split):
        return split
    _, subset = _hold_out(split, size, seed, stratify)
    return subset


def _check_train(data: TaskData) -> None:
    """Refuses a train split the task's kind cannot learn from (one class only, no label at all, one value)."""
    why = data.kind.check_train(data.targets("train"), data.labels)
    if why is not None:
        raise DataError(why)
