"""The runs a report compares: reading them, grouping seeds into models, and refusing mismatched ones.

Runs are read only through `run.json` (`core.record.read_run`) and `core.classifier.load`; nothing here imports
training code.
Runs sharing a name (the side, or `--names`) are seeds of one model; the first, by seed, is the model's
primary run, whose predictions the bootstrap and error analysis use.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core import sides
from core.args import DataArguments
from core.data import TaskData, leakage, load_task
from core.kinds import Kind
from core.record import RunRecord, read_run
from core.rundir import RunError
from core.tasks import get_task
from core.translator import is_translation_run


@dataclass
class ComparedRun:
    name: str
    path: Path
    record: RunRecord

    @property
    def seed(self) -> int | None:
        return self.record.seed

    @property
    def train_rows(self) -> int:
        return self.record.train_rows


@dataclass
class Model:
    """One compared model: its name and its runs (one per training seed, the primary first)."""

    name: str
    runs: list[ComparedRun]

    @property
    def primary(self) -> ComparedRun:
        return self.runs[0]


@dataclass
class EvalSplit:
    """The labelled split every model is scored on (`name`), and the task's other splits the reference rows learn
    from, read from the task once; `kind` is the kind of task the runs solve."""

    name: str
    task: TaskData
    kind: Kind

    @property
    def headline(self) -> str:
        return self.kind.headline

    @property
    def labels(self) -> list[str]:
        return list(self.task.labels)

    @property
    def source(self) -> str:
        return self.task.source

    @functools.cached_property
    def texts(self) -> list[str]:
        return self.task.texts(self.name)

    @functools.cached_property
    def pairs(self) -> list[str] | None:
        """The second texts of a pair task; None without pairs."""
        return self.task.text_pairs(self.name)

    @functools.cached_property
    def gold(self) -> np.ndarray:
        return gold(self.task, self.name, self.kind)

    @property
    def train_gold(self) -> np.ndarray:
        return self.part("train")[2]

    def part(self, split: str) -> tuple[list[str], list[str] | None, np.ndarray]:
        """(texts, second texts or None, gold) of one of the task's splits."""
        if split == self.name:
            return self.texts, self.pairs, self.gold
        return self.task.texts(split), self.task.text_pairs(split), gold(self.task, split, self.kind)


def gold(task: TaskData, split: str, kind: Kind) -> np.ndarray:
    """The gold answers of a split as the scores take them: int64 class ids (n,) or 0/1 rows (n, L), float64 values
    (n,) for a kind that gives values."""
    return task.targets(split).astype(np.float64 if kind.gives_values else np.int64)


def input_columns(record: RunRecord) -> dict[str, list[str] | str] | None:
    """For a pair task, the columns its two texts came from: `{"text": [columns], "text_pair": column}`; None for
    single texts. A named task read from its local mirror has the mirror's columns, else the options' or the task's."""
    data = record.data
    pair = data.text_pair_column
    if pair is None:
        return None
    options = data.options
    if options.get("task") is not None:
        spec = get_task(options["task"])
        mirrored = "local mirror" in data.source
        text = spec.mirror_columns.text if mirrored else options.get("text_column") or spec.hub_columns.text
    else:
        text = options.get("text_column") or ["text"]
    return {"text": list(text), "text_pair": pair}


def read_runs(paths: list[str | Path], names: list[str] | None = None) -> list[ComparedRun]:
    """Reads each run's `run.json` (raising RunError for a missing or unfinished run) and names it."""
    if names is not None and len(names) != len(paths):
        raise RunError(f"--names gives {len(names)} name(s) for {len(paths)} run(s); give one name per run.")
    runs = []
    for i, path in enumerate(paths):
        if is_translation_run(path):
            raise RunError(
                f"{path} is a translation run; a classification report compares classifiers. Put translation runs "
                "in a translation report of their own (`compare report --runs` with translation runs only)."
            )
        record = read_run(path)
        runs.append(ComparedRun(names[i] if names else sides.of_run(record).name, Path(path), record))
    return runs


def group_models(runs: list[ComparedRun]) -> list[Model]:
    """Groups runs of the same name into one model per name (order of first appearance), sorted by seed."""
    models: dict[str, list[ComparedRun]] = {}
    for run in runs:
        models.setdefault(run.name, []).append(run)
    grouped = []
    for name, members in models.items():
        seeds = [r.seed for r in members]
        if len(set(seeds)) != len(seeds):
            seed = next(s for s in seeds if seeds.count(s) > 1)
            twins = [str(r.path) for r in members if r.seed == seed]
            raise RunError(
                f"Runs {twins[0]} and {twins[1]} are both called {name!r} and were trained with the same seed "
                f"{seed}; give each run its own name with --names."
            )
        grouped.append(Model(name, sorted(members, key=lambda r: (r.seed is None, r.seed))))
    counts = {m.name: len(m.runs) for m in grouped}
    if len(set(counts.values())) > 1:
        raise RunError(f"Every model needs the same number of seeds to be compared; got {counts}.")
    if len(grouped) < 2:
        raise RunError(
            f"A comparison needs at least two models, got only {grouped[0].name!r}. Pass runs of both sides, "
            "or tell runs of one side apart with --names."
        )
    return grouped


def check_compatible(runs: list[ComparedRun], split: str) -> list[str]:
    """Refuses runs that cannot be compared on `split`; returns notes on differences that are allowed.

    Every run must have the same kind of task and label set, and identical validation and evaluated splits (by
    fingerprint). Train splits may differ (a profile can give each side its own subset size); that is noted.
    """
    first = runs[0]
    for run in runs[1:]:
        kind, first_kind = run.record.kind, first.record.kind
        if kind != first_kind:
            raise RunError(
                f"Runs {first.path} and {run.path} solve different kinds of task: {first_kind.name} versus "
                f"{kind.name}. Compare runs trained on the same task."
            )
        if run.record.data.labels != first.record.data.labels:
            raise RunError(
                f"Runs {first.path} and {run.path} have different label sets: {first.record.data.labels} versus "
                f"{run.record.data.labels}. Compare runs trained on the same task."
            )
    check_same_splits(runs, split, "examples", labelled=True)
    notes = []
    train = {r.record.data.fingerprints.get("train") for r in runs}
    if len(train) > 1:
        rows = ", ".join(f"{r.name} (seed {r.seed}): {r.train_rows:,}" for r in runs)
        notes.append(f"The runs trained on different train subsets; train rows {rows}.")
    return notes


def leakage_notes(split: str, items: list, train: list, unit: str) -> list[str]:
    """A note when items of the scored split (texts, text pairs, or translation sources; `unit` names them) also
    occur in train: a model can score on those from memory. Empty when there are none, or when the split is train
    itself."""
    shared = 0 if split == "train" else leakage(train, {split: items})[split]
    if not shared:
        return []
    return [
        f"{shared:,} of {len(items):,} {split} {unit} ({shared / len(items):.1%}) also occur in the train split; "
        "models can answer those from memory, so their scores may overstate performance on new text."
    ]


def check_same_splits(runs: list, split: str, what: str, labelled: bool = False) -> None:
    """Refuses runs (each with `path` and `record`, its RunRecord) of which one lacks `split`, or two saw different
    `split` or validation splits, by the fingerprints run.json records; train splits may differ."""
    first = runs[0]
    for run in runs:
        if split not in run.record.data.fingerprints:
            have = ", ".join(run.record.data.fingerprints) or "none"
            kind = "labelled " if labelled else ""
            raise RunError(f"Run {run.path} has no {kind}{split!r} split (it has: {have}); choose another --split.")
    for run in runs[1:]:
        ours, theirs = first.record.data.fingerprints, run.record.data.fingerprints
        for name in sorted((set(ours) | set(theirs) | {split}) - {"train"}):
            if ours.get(name) != theirs.get(name):
                raise RunError(
                    f"Runs {first.path} and {run.path} saw different {name} splits (fingerprint "
                    f"{str(ours.get(name))[:12]} versus {str(theirs.get(name))[:12]}). Train them with the same data "
                    f"options (task or files, --seed) so that they are scored on identical {what}."
                )


def data_arguments(record: RunRecord, options: type = DataArguments) -> Any:
    """The data options a run recorded, as `options` (DataArguments, or PairDataArguments for a translation
    run), unknown keys from newer versions ignored."""
    known = {f.name for f in dataclasses.fields(options)}
    return options(**{k: v for k, v in record.data.options.items() if k in known})


def load_split(runs: list[ComparedRun], split: str) -> EvalSplit:
    """Reads the data once: the evaluated split (checked against the fingerprint the runs recorded) beside the
    largest train split any run saw, for the reference rows.

    The data is loaded with the options of the run that trained on the most rows; `check_compatible` has made
    sure every run recorded the same evaluated split, so its texts are every run's.
    """
    biggest = max(runs, key=lambda r: r.train_rows)
    return EvalSplit(split, _load_checked(biggest, split), biggest.record.kind)


def _load_checked(run: ComparedRun, split: str) -> TaskData:
    try:
        data = load_task(data_arguments(run.record))
    except ValueError as error:
        raise RunError(f"Could not load the data run {run.path} was trained on: {error}") from error
    if split in data.carved and split not in run.record.data.carved_from_train:
        raise RunError(
            f"The {split} split of {data.source} has no labels now, so it cannot be scored (run {run.path} was "
            f"trained with a labelled one). Restore its labels or choose another --split."
        )
    if data.fingerprints[split] != run.record.data.fingerprints[split]:
        raise RunError(
            f"The {split} split loaded now from {data.source} differs from the one run {run.path} recorded: the data "
            "changed since training. Retrain the runs on the current data."
        )
    return data
