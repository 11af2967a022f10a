"""`python -m compare run <data options> --output-dir DIR`: train both sides (or reuse their runs), then report.

Runs go to `DIR/runs/finetune` and `DIR/runs/scratch`; with `--seeds N` (N > 1) to
`DIR/runs/finetune-seed<S>` and `DIR/runs/scratch-seed<S>` for S = --seed, --seed + 1, ... The report
goes to DIR. Model flags beyond the profile's pass through `--side-args NAME="..."` (a shell-quoted string per side,
or `--finetune-args "..."` / `--scratch-args "..."`), for instance tiny configurations in tests; `--class-weight`
goes to both.
With `--tune N` each tuned side's model is instead the best of the N trials of an Optuna study on validation, by the
task's headline score (`compare.run.tuning`), under `DIR/runs/tune/<side>/trial-NNN`; several processes running the
same command on one `--tune-storage` share the trials, and the one that finishes the last writes the report. With `--distill` each fine-tuned
run also teaches a from-scratch student, `DIR/runs/scratch-distilled` (`compare.run.distill`), the report's third
model. With `--self-pretrain` the from-scratch side is also trained self-pretrained (`python -m scratch
--self-pretrain`, the side `scratch-pretrained` of `core.sides`, same profile and budget), `DIR/runs/scratch-pretrained`.
With `--audit-train K` K small from-scratch models cross-validate the train split, so that the report doubts its gold
labels too (`compare.run.audit`).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from compare.progress import Progress
from compare.report.arguments import ReportArguments
from compare.report.command import Loader, build_report
from compare.report.publish import check_output_dir
from compare.run.arguments import CompareRunArguments
from compare.run.audit import audit_train, check_audit
from compare.run.distill import TEACHER, distilled_runs
from compare.run.launch import data_flags, run_dirs, train_side
from compare.run.profiles import side_data
from compare.run.tuning import check_tuning, other_runs, studies_of, train_others, tune_side
from compare.scoring.statistics import StatisticsArguments
from core import kinds, sides
from core.args import DataArguments
from core.classifier import load
from core.cli import working
from core.data import load_task

logger = logging.getLogger(__name__)


def main(argv: list[str] | None = None) -> int:
    """`python -m compare run ...` (both kinds of task; `compare.commands`)."""
    from compare.commands import RUN

    return RUN.main(argv)


def run_comparison(
    data: DataArguments,
    args: CompareRunArguments,
    stats: StatisticsArguments,
    progress: Progress | None = None,
    loader: Loader = load,
) -> dict:
    """Checks the input (`check_comparison`: a refusal is a `UserError`, exit status 2), then trains (or reuses)
    every run and writes the report into `args.output_dir`; returns results.json. A failure while training or
    reporting is a `WorkFailed` (exit status 1; `core.cli`).

    `loader` turns a run directory into a Classifier for the report; tests replace it.
    """
    progress = progress or Progress()
    check_comparison(data, args)
    with working():
        return train_and_report(data, args, stats, progress, loader)


def check_comparison(data: DataArguments, args: CompareRunArguments) -> None:
    """Everything `compare run` can refuse before any side starts (the flags each side gets were checked by the
    options themselves): the output directory, the data (files there and readable, columns present), a class weight
    the kind of task has no classes for, every tuning trial's flags, the tuning storage and its studies' data. Creates
    nothing but the tuning studies."""
    check_output_dir(Path(args.output_dir))
    checked, names = [], sides.classifier_names(args.opted_in())
    for side in names:  # each side's data, as the profile cuts it
        options = side_data(data, side, args.profile, data.seed)
        if options not in checked:
            task = load_task(options)
            checked.append(options)
    if args.class_weight:
        kinds.get(task.problem_type).check_class_weight(args.class_weight)
    if args.audit_train:
        check_audit(task, args.audit_train)
    if args.tune:
        check_tuning(data, args)  # the trials' flags, the storage, the studies' data: before any training
    if args.self_pretrain:
        check_unlabeled_file(data, args.side_flags(sides.SELF_PRETRAINED))


def check_unlabeled_file(data: DataArguments, flags: list[str]) -> None:
    """Reads the `--unlabeled-file` among the self-pretrained side's flags as its command will, so that a missing,
    empty or text-column-less file is refused before any side trains."""
    from core.args import RunArguments
    from core.parsing import CommandParser
    from scratch.pretraining import read_unlabeled, text_columns

    side = sides.get(sides.SELF_PRETRAINED)
    parser = CommandParser((DataArguments, RunArguments, side.options()), prog=f"python -m {side.command}")
    *_, options = parser.parse([*data_flags(data), "--output-dir", "_", *flags])
    if options.unlabeled_file:
        read_unlabeled(options.unlabeled_file, text_columns(data))


def tune_sides(
    data: DataArguments, args: CompareRunArguments, names: list[str], progress: Progress
) -> tuple[dict | None, list[tuple[str, Path]]]:
    """With `--tune`: this process's share of the tuning trials and of the other runs (`compare.run.tuning`).

    Returns:
        (results.json `tuning`, the report's runs by side and seed), or (None, []) when another process finished the
        last training and writes the report.
    """
    studies = studies_of(data, args)
    tuning, last = {}, True
    for side in args.tuned_sides():
        tuning[side], last = tune_side(side, data, args, studies, progress)
    runs = other_runs(data, args, tuning, names)
    grid, finished = train_others(runs, args, studies, progress)
    if not (finished if runs else last):
        progress.stage(
            "the process that finished the last training writes the report: %s", Path(args.output_dir) / "report.html"
        )
        return None, []
    tuning = {"study": studies.record(args, grid), **tuning}
    ordered = []
    for side in names:
        chosen = [Path(tuning[side]["trials"][tuning[side]["selected"]]["run"])] if side in tuning else []
        ordered += [(side, path) for path in chosen + [run_dir for s, _, _, run_dir in runs.values() if s == side]]
    return tuning, ordered


def train_and_report(
    data: DataArguments, args: CompareRunArguments, stats: StatisticsArguments, progress: Progress, loader: Loader
) -> dict | None:
    """The work of `run_comparison`, once its input is checked (None: another process of a shared `--tune` writes the
    report)."""
    output_dir = Path(args.output_dir)
    seeds = [data.seed + i for i in range(args.seeds)]
    tuning, names = None, sides.classifier_names(args.opted_in())
    if args.tune:
        tuning, ordered = tune_sides(data, args, names, progress)
        if tuning is None:
            return None
    else:
        paths = run_dirs(output_dir, seeds, names)
        for (side, seed), path in paths.items():
            run_dir, reused = train_side(
                sides.get(side), side_data(data, side, args.profile, seed), args.side_flags(side), path, args.retrain
            )
            progress.stage("%s %s (seed %d): %s", "reused" if reused else "trained", side, seed, run_dir)
        ordered = [(side, paths[(side, seed)]) for side in names for seed in seeds]
        if args.distill:
            ordered += distilled_runs(data, args, {seed: paths[(TEACHER, seed)] for seed in seeds}, progress)
    report_args = ReportArguments(
        runs=[str(path) for _, path in ordered],
        output_dir=str(output_dir),
        names=[side for side, _ in ordered],
        faithfulness=args.faithfulness,
    )
    train_audit = audit_train(data, args, args.audit_train, progress) if args.audit_train else None
    return build_report(report_args, stats, progress, loader=loader, tuning=tuning, train_audit=train_audit)


if __name__ == "__main__":
    sys.exit(main())
