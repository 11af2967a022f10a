"""What a model cost to make, from its own run: parameters, size on disk, training time (and its teacher's, for a
distilled run), epochs, train rows."""

from __future__ import annotations

from pathlib import Path

from core.rundir import dir_size


def run_costs(run: dict, run_dir: Path) -> dict:
    """Parameters, size on disk, training seconds, epochs and train rows, from the run's own record.

    `teacher_seconds` is run.json's `distillation.seconds`: the time a distilled run's teacher spent labelling
    (classification) or translating (translation) the train texts before training, null without a teacher.
    """
    distillation = run.get("distillation") or {}
    return {
        "params": run["model"]["params"],
        "disk_bytes": dir_size(run_dir),
        "train_seconds": run["training"]["seconds"],
        "epochs": run["training"]["epochs_run"],
        "train_rows": run["data"]["splits"].get("train"),
        "teacher_seconds": distillation.get("seconds", distillation.get("labelling_seconds")),  # older runs
    }
