"""The translation runs a report compares: reading them (refusing classification runs), and their test split.

Runs are read only through `run.json` (`core.record.read_run`) and `core.translator.load`.
Every run must have recorded the same scored and validation splits (by fingerprint); train splits may
differ, which is noted.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from compare.report.runs import check_same_splits, data_arguments, leakage_notes
from core.pairs import PairDataArguments, PairSplit, load_pairs
from core.record import RunRecord, read_run
from core.rundir import RUN_JSON, RunError
from core.task_kinds import TRANSLATION
from core.translator import is_translation_run


@dataclass
class TranslationRun:
    name: str
    path: Path
    record: RunRecord


def read_translation_runs(paths: list[str | Path], names: list[str] | None = None) -> list[TranslationRun]:
    """Reads each translation run, named by `names` or else by its directory; refuses classification runs."""
    if names is not None and len(names) != len(paths):
        raise RunError(f"--names gives {len(names)} name(s) for {len(paths)} run(s); give one name per run.")
    runs = []
    for i, path in enumerate(map(Path, paths)):
        if (path / RUN_JSON).is_file() and not is_translation_run(path):
            raise RunError(
                f"{path} is a classification run; a translation report compares translation runs (trained with "
                "`python -m scratch --task pt_en` or --source-column/--target-column). Score classification runs "
                "in a report of their own."
            )
        runs.append(TranslationRun(names[i] if names else path.name, path, read_run(path, TRANSLATION)))
    taken = [r.name for r in runs]
    repeated = sorted({n for n in taken if taken.count(n) > 1})
    if repeated:
        raise RunError(f"Two runs are both called {repeated[0]!r}; give each its own name with --names.")
    return runs


def check_compatible(runs: list[TranslationRun], split: str) -> list[str]:
    """Refuses runs whose scored or validation splits differ; returns notes on allowed differences."""
    check_same_splits(runs, split, "sentences")
    if len({r.record.data.fingerprints.get("train") for r in runs}) > 1:
        rows = ", ".join(f"{r.name}: {r.record.train_rows:,}" for r in runs)
        return [f"The runs trained on different train splits; train pairs {rows}."]
    return []


def load_split(run: TranslationRun, split: str) -> tuple[PairSplit, str, list[str]]:
    """The split `run` was scored on, reloaded and checked against its fingerprint; the data's source; and a note
    when its sources also occur in train (`leakage_notes`)."""
    try:
        data = load_pairs(data_arguments(run.record, PairDataArguments))
    except ValueError as error:
        raise RunError(f"Could not load the data run {run.path} was trained on: {error}") from error
    if data.splits[split].fingerprint() != run.record.data.fingerprints[split]:
        raise RunError(
            f"The {split} split loaded now from {data.source} differs from the one run {run.path} recorded: the data "
            "changed since training. Retrain the runs on the current data."
        )
    notes = leakage_notes(split, data.splits[split].sources, data.splits["train"].sources, "sources")
    return data.splits[split], data.source, notes
