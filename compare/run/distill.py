"""`compare run --distill` and `compare curve --distill`: the from-scratch student of each fine-tuned run.

The student is `python -m scratch` with the scratch side's profile and flags, `--teacher <the fine-tuned run>`
and `--distill-args`, trained through `train_side` like the sides, so a finished student with the same data,
flags and teacher is reused. A student whose teacher was trained again since (its run.json `created` differs
from the one the student recorded) is trained again too. The model is called `scratch-distilled`.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from compare.progress import Progress
from compare.run.arguments import SideTrainingArguments
from compare.run.launch import train_side
from compare.run.profiles import side_data
from core import sides
from core.args import DataArguments
from core.record import read_run
from core.rundir import RunError
from core.sides import FROM_SCRATCH, PRETRAINED, STUDENT

TEACHER = PRETRAINED


def student_dir(output_dir: Path, seeds: list[int], seed: int) -> Path:
    """`runs/scratch-distilled`, or with several seeds `runs/scratch-distilled-seed<S>`, as the sides' runs."""
    name = STUDENT if len(seeds) == 1 else f"{STUDENT}-seed{seed}"
    return Path(output_dir) / "runs" / name


def student_flags(args: SideTrainingArguments, teacher: Path) -> list[str]:
    """The scratch side's flags, then the teacher, then `--distill-args`."""
    return [*args.side_flags(FROM_SCRATCH), "--teacher", str(Path(teacher).resolve()), *shlex.split(args.distill_args)]


def teacher_changed(student: Path, teacher: Path) -> bool:
    """Whether the finished student in `student` learnt from another training of `teacher` than the one there now."""
    try:
        recorded = (read_run(student).distillation or {}).get("teacher_created")
        return recorded != read_run(teacher).created
    except RunError:
        return False  # no finished student: train_side trains it anyway


def train_student(
    data: DataArguments, args: SideTrainingArguments, teacher: Path, run_dir: Path, seed: int
) -> tuple[Path, bool]:
    """Trains (or reuses) the student of `teacher` into `run_dir`; returns (the run, whether it was reused)."""
    retrain = args.retrain or teacher_changed(run_dir, teacher)
    options = side_data(data, FROM_SCRATCH, args.profile, seed)
    return train_side(sides.get(FROM_SCRATCH), options, student_flags(args, teacher), run_dir, retrain)


def distilled_runs(
    data: DataArguments, args: SideTrainingArguments, teachers: dict[int, Path], progress: Progress
) -> list[tuple[str, Path]]:
    """The student of each seed's fine-tuned run, as (model name, run directory) pairs for the report."""
    seeds = list(teachers)
    found = []
    for seed, teacher in teachers.items():
        run_dir, reused = train_student(data, args, teacher, student_dir(Path(args.output_dir), seeds, seed), seed)
        progress.stage(
            "%s %s (seed %d, teacher %s): %s", "reused" if reused else "trained", STUDENT, seed, teacher, run_dir
        )
        found.append((STUDENT, run_dir))
    return found
