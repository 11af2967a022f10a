"""`python -m compare run <data options> --output-dir DIR`: train both sides (or reuse their runs), then report.

Runs go to `DIR/runs/finetune` and `DIR/runs/scratch`; with `--seeds N` (N > 1) to
`DIR/runs/finetune-seed<S>` and `DIR/runs/scratch-seed<S>` for S = --seed, --seed + 1, ... The report
goes to DIR. Model flags beyond the profile's pass through `--finetune-args "..."` / `--scratch-args "..."`
(a shell-quoted string each), for instance tiny configurations in tests; `--class-weight` goes to both.
With `--tune N` each side's model is instead the best of N seeded random trials on validation accuracy
(`compare.run.tuning`), under `DIR/runs/tune/<side>/trial-NNN`. With `--distill` each fine-tuned run also teaches a
from-scratch student, `DIR/runs/scratch-distilled` (`compare.run.distill`), the report's third model.
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass, field
from pathlib import Path

from compare.progress import Progress, setup_logging
from compare.report.command import Loader, ReportArguments, build_report
from compare.report.publish import ReportDirError, check_output_dir
from compare.run.arguments import SideTrainingArguments
from compare.run.distill import TEACHER, distilled_runs
from compare.run.launch import train_side
from compare.run.profiles import side_data
from compare.run.tuning import check_trials, tune_side
from compare.scoring.statistics import StatisticsArguments
from core import sides
from core.args import DataArguments, parse_args
from core.classifier import load
from core.data import DataError
from core.pairs import is_translation
from core.processes import ProcessError
from core.rundir import RunError

logger = logging.getLogger(__name__)


@dataclass
class CompareRunArguments(SideTrainingArguments):
    """Where the runs and the report go (the report in output_dir), and how the sides are trained."""

    tune: int | None = field(
        default=None,
        metadata={
            "help": "Tune each side: train N seeded random trials of its search space and keep the one with the "
            "best validation accuracy (runs/tune/<side>/trial-NNN; the profile's step budget gives way to each "
            "trial's)."
        },
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.tune and self.distill:
            raise ValueError(
                "--distill does not combine with --tune yet; distil the sides' profile runs without --tune."
            )
        if self.tune is not None and self.tune < 1:
            raise ValueError(
                f"--tune must be a positive number of trials per side, got {self.tune}; leave it out to train "
                "each side once with the profile's settings."
            )


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if is_translation(argv):  # --task pt_en or parallel-text columns: the translation report
        from compare.translation.command import main as translation_main

        return translation_main(argv)
    data, args, stats = parse_args((DataArguments, CompareRunArguments, StatisticsArguments), argv)
    setup_logging()
    try:
        run_comparison(data, args, stats)
    except (RunError, DataError, ReportDirError, ProcessError) as error:
        logger.error("compare run: %s", error)
        return 1
    return 0


def run_dirs(output_dir: Path, seeds: list[int]) -> dict[tuple[str, int], Path]:
    """Where each (side, seed) run lives."""
    runs, names = output_dir / "runs", sides.classifier_names()
    if len(seeds) == 1:
        return {(side, seeds[0]): runs / side for side in names}
    return {(side, seed): runs / f"{side}-seed{seed}" for seed in seeds for side in names}


def run_comparison(
    data: DataArguments,
    args: CompareRunArguments,
    stats: StatisticsArguments,
    progress: Progress | None = None,
    loader: Loader = load,
) -> dict:
    """Trains (or reuses) every run, then writes the report into `args.output_dir`; returns results.json.

    `loader` turns a run directory into a Classifier for the report; tests replace it.
    """
    progress = progress or Progress()
    output_dir = Path(args.output_dir)
    check_output_dir(output_dir)  # before hours of training, not after
    seeds = [data.seed + i for i in range(args.seeds)]
    tuning, names = None, sides.classifier_names()
    if args.tune:
        for side in names:
            check_trials(side, data, args, args.tune)  # every trial's flags, before the first trains
        tuning, ordered = {}, []
        for side in names:
            tuning[side], paths = tune_side(side, data, args, args.tune, progress)
            ordered += [(side, path) for path in paths]
    else:
        paths = run_dirs(output_dir, seeds)
        for (side, seed), path in paths.items():
            run_dir, reused = train_side(
                side, side_data(data, side, args.profile, seed), args.side_flags(side), path, args.retrain
            )
            progress.stage("%s %s (seed %d): %s", "reused" if reused else "trained", side, seed, run_dir)
        ordered = [(side, paths[(side, seed)]) for side in names for seed in seeds]
        if args.distill:
            ordered += distilled_runs(data, args, {seed: paths[(TEACHER, seed)] for seed in seeds}, progress)
    report_args = ReportArguments(
        runs=[str(path) for _, path in ordered], output_dir=str(output_dir), names=[side for side, _ in ordered]
    )
    return build_report(report_args, stats, progress, loader=loader, tuning=tuning)


if __name__ == "__main__":
    sys.exit(main())
