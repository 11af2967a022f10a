"""What a model cost to make, from its own run: parameters, size on disk, training time (and its teacher's, for a
distilled run), epochs, optimizer steps, passes over the training data, train rows."""

from __future__ import annotations

from pathlib import Path

from core.record import RunRecord
from core.rundir import dir_size


def run_costs(record: RunRecord, run_dir: Path) -> dict:
    """Parameters, size on disk, training seconds, epochs, steps, passes and train rows, from the run's own record.

    `teacher_seconds` is run.json's `distillation.seconds`: the time a distilled run's teacher spent labelling
    (classification) or translating (translation) the train texts before training, null without a teacher.
    `pretrain_seconds` and `pretrain_steps` are a self-pretrained run's `pretraining.seconds` and `.steps`, before
    the fine-tuning `train_seconds` and `steps` count; null for other runs.
    """
    distillation = record.distillation or {}
    pretraining = record.pretraining
    return {
        "params": record.model.params,
        "disk_bytes": dir_size(run_dir),
        "train_seconds": record.training.seconds,
        "epochs": record.training.epochs_run,
        "steps": record.training.steps,
        "passes": passes(record),
        "train_rows": record.data.splits.get("train"),
        "teacher_seconds": distillation.get("seconds", distillation.get("labelling_seconds")),  # older runs
        "pretrain_seconds": pretraining.seconds if pretraining else None,
        "pretrain_steps": pretraining.steps if pretraining else None,
    }


def passes(record: RunRecord) -> float | None:
    """How many times training went over the train split: the examples its training log counts (`examples` of each
    `history.jsonl` line) over the split's size. An `--eval-steps` run's epochs are periods of N steps, so this is
    what says how much data it saw. None for a record without the counts.

    >>> from types import SimpleNamespace as record
    >>> passes(record(data=record(splits={"train": 100}), training=record(history=[{"examples": 80}, {"examples": 70}])))
    1.5
    """
    history, rows = record.training.history or [], record.data.splits.get("train")
    if not rows or not history or any("examples" not in row for row in history):
        return None
    return sum(row["examples"] for row in history) / rows
