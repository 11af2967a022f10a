"""`compare run --tune N`: N seeded random trials per side, and the side's model chosen on validation only.

Each trial is a run directory `<output>/runs/tune/<side>/trial-NNN`, trained through `train_side` like the
main runs, so a finished trial with the same data options and flags is reused: trial i is the same whatever N
(`compare.tune.space`; the profile sets the range of its training length), so a rerun with a larger N trains
only the new trials. A trial's flags are the profile's without its step budget (the trial's `--max-steps` is
its training length), `--class-weight` and the user's flags, then the trial's parameters, which win over both.
Only the validation headline score from each trial's run.json (`validation.accuracy`, `validation.macro_f1` or
`validation.spearman`, as `data.headline_metric` names it) is read to choose; with `--seeds N` the chosen parameters
are trained again for the other seeds into `trial-NNN-seed<S>`.
"""

from __future__ import annotations

from pathlib import Path

from compare.progress import Progress
from compare.run.arguments import SideTrainingArguments, check_command_flags
from compare.run.launch import train_side
from compare.run.profiles import side_data
from compare.scoring import wording
from compare.tune import sample_trials, trial_flags, trial_name, tuning_record
from core.args import DataArguments
from core.record import read_run
from core.rundir import RunError


def trial_dir(output_dir: Path, side: str, index: int, seed: int | None = None) -> Path:
    """Where trial `index` of `side` lives; `seed` names a rerun of it under another training seed."""
    name = trial_name(index) + (f"-seed{seed}" if seed is not None else "")
    return output_dir / "runs" / "tune" / side / name


def check_trials(side: str, data: DataArguments, args: SideTrainingArguments, trials: int) -> None:
    """Raises `RunError` when `python -m <side>` would refuse the flags of one of the first `trials` trials (the
    user's flags beside a drawn training length, say), before any trial trains."""
    flags = args.side_flags(side, budget=False)
    for index, params in enumerate(sample_trials(side, trials, seed=data.seed, profile=args.profile)):
        try:
            check_command_flags(side, [*flags, *trial_flags(params)])
        except ValueError as error:
            raise RunError(f"--tune: {side} {trial_name(index)}: {error}") from None


def tune_side(
    side: str, data: DataArguments, args: SideTrainingArguments, trials: int, progress: Progress
) -> tuple[dict, list[Path]]:
    """Trains (or reuses) the first `trials` trials of `side` and chooses one on its validation headline score.

    Args:
        side: `finetune` or `scratch`.
        data: the data options, `--seed` included (it seeds both the search and the training).
        args: the profile, seeds, class weight and the user's flags.
        trials: N of `--tune N`.
    Returns:
        (results.json `tuning.<side>`, the chosen trial's run directories, one per seed, the trial's own first).
    """
    output_dir, flags = Path(args.output_dir), args.side_flags(side, budget=False)
    seeds = [data.seed + i for i in range(args.seeds)]
    found = []
    for index, params in enumerate(sample_trials(side, trials, seed=data.seed, profile=args.profile)):
        run_dir, reused = train_side(
            side,
            side_data(data, side, args.profile, data.seed),
            [*flags, *trial_flags(params)],
            trial_dir(output_dir, side, index),
            args.retrain,
        )
        record = read_run(run_dir)
        metric = record.data.headline_metric or "accuracy"
        value = record.validation[metric]
        found.append({"params": params, f"validation_{metric}": value, "run": str(run_dir)})
        progress.stage(
            "%s %s %s %s: validation %s %.4f",
            "reused" if reused else "trained",
            side,
            trial_name(index),
            params,
            wording.name(metric),
            value,
        )
    search = tuning_record(found, metric)
    chosen = search["trials"][search["selected"]]
    progress.stage("chose %s %s on validation: %s", side, trial_name(search["selected"]), chosen["params"])
    paths = [Path(chosen["run"])]
    for seed in seeds[1:]:
        run_dir, reused = train_side(
            side,
            side_data(data, side, args.profile, seed),
            [*flags, *trial_flags(chosen["params"])],
            trial_dir(output_dir, side, search["selected"], seed),
            args.retrain,
        )
        progress.stage("%s %s (seed %d): %s", "reused" if reused else "trained", side, seed, run_dir)
        paths.append(run_dir)
    return search, paths
