"""`compare run --tune N`: each tuned side's N trials as one Optuna study, its model chosen on validation only, and
every other training the command needs claimed through a study too.

The studies live in `--tune-storage` (a journal file, `<output>/runs/tuning.journal` by default, or a database URL)
under `--tune-study` (the output folder's name by default): `<name>/tune-<side>` holds the side's trials, and
`<name>/runs-<hash>` the other runs as a grid (Optuna's `GridSampler`, one point per run): the untuned sides' runs
(`--tune-sides`) and the chosen trials' reruns for the other seeds of `--seeds N`, named by a hash of what they
train, so that other chosen parameters make another grid. Several processes or machines running the same command on
one storage share the trials (`compare.tune.study`); each process trains trials until every study has all of its
trials finished, and the one that finished the last trial writes the report.

Each trial is a run directory `<output>/runs/tune/<side>/trial-NNN` (NNN: the place of the trial's slot, which its
retries keep),
trained through `train_side` like the main runs, so that a finished trial with the same data options and flags is
reused and an interrupted one resumed. A trial's flags are the profile's without its step budget (the trial's
`--max-steps` is its training length), `--class-weight` and the user's flags, then the trial's parameters, which win
over both. Each validation of a trial is reported to its study (`core.training.pruning`), whose pruner
(`--tune-pruner`) may stop it there: its run is then finished with `training.stop_reason: pruned`, and the trial
pruned. Only the validation headline score of each completed trial's run.json (`validation.accuracy`,
`validation.macro_f1` or `validation.spearman`, as `data.headline_metric` names it) is read to choose.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import optuna
from optuna.trial import TrialState

from compare.progress import Progress
from compare.run.arguments import CompareRunArguments, check_command_flags
from compare.run.launch import run_dirs, train_side
from compare.run.profiles import side_data
from compare.scoring import wording
from compare.tune import sample_trials, search_space, suggest, trial_flags, trial_name, tuning_record
from compare.tune.sampling import make_pruner, make_sampler
from compare.tune.study import Outcome, Sweep, check_study, importances, open_study, run_grid
from core import sides
from core.args import DataArguments
from core.data import load_task
from core.record import read_run
from core.rundir import RunError
from core.studies import masked
from core.training.pruning import TRIAL_ENV

STORAGE_FILE = "tuning.journal"  # in the output folder's runs/, which a report folder may hold


@dataclass(frozen=True)
class Studies:
    """Where a `compare run --tune` keeps its studies, and what they sweep."""

    storage: str
    name: str
    fingerprint: str
    described: str

    def side(self, side: str) -> str:
        """The study of `side`'s tuning trials."""
        return f"{self.name}/tune-{side}"

    def record(self, args: CompareRunArguments, runs: str | None) -> dict:
        """results.json `tuning.study`: the storage (password masked) and the studies' names."""
        names = {side: self.side(side) for side in args.tuned_sides()}
        return {
            "storage": masked(self.storage),
            "studies": {**names, **({"runs": runs} if runs else {})},
            "sampler": args.tune_sampler,
            "pruner": args.tune_pruner,
        }


def studies_of(data: DataArguments, args: CompareRunArguments) -> Studies:
    """The storage and names of the command's studies, and the fingerprint of the data they sweep (its splits as
    the first tuned side's profile cuts them)."""
    output_dir = Path(args.output_dir)
    storage = args.tune_storage or str(output_dir / "runs" / STORAGE_FILE)
    name = args.tune_study or output_dir.resolve().name
    first = args.tuned_sides()[0]
    task = load_task(side_data(data, first, args.profile, data.seed))
    digest = hashlib.sha256(json.dumps(task.fingerprints, sort_keys=True).encode()).hexdigest()
    source = data.task or data.train_file
    described = f"{source}, {len(task.splits['train'])} train rows, fingerprint {digest[:12]}"
    return Studies(storage, name, digest, described)


def trial_dir(output_dir: Path, side: str, index: int, seed: int | None = None) -> Path:
    """Where trial `index` of `side` lives; `seed` names a rerun of it under another training seed."""
    name = trial_name(index) + (f"-seed{seed}" if seed is not None else "")
    return output_dir / "runs" / "tune" / side / name


def check_tuning(data: DataArguments, args: CompareRunArguments) -> Studies:
    """Everything `--tune` can refuse before any trial trains: flags a side would refuse among its first trials, a
    storage that cannot be reached, a study of other data under the same name. Opens (creates) the studies."""
    for side in args.tuned_sides():
        check_trials(side, data, args, args.tune)
    studies = studies_of(data, args)
    for side in args.tuned_sides():
        study, _ = open_study(studies.storage, studies.side(side), make_sampler(args.tune_sampler, data.seed))
        check_study(study, studies.fingerprint, studies.described)
    return studies


def check_trials(side: str, data: DataArguments, args: CompareRunArguments, trials: int) -> None:
    """Raises `RunError` when `python -m <side>` would refuse the flags of one of the first `trials` trials (the
    user's flags beside a drawn training length, say), before any trial trains. (TPE's later draws depend on the
    trials before them; these are its first, random ones.)"""
    flags = args.side_flags(side, budget=False)
    for index, params in enumerate(sample_trials(side, trials, seed=data.seed, profile=args.profile)):
        try:
            check_command_flags(sides.get(side), [*flags, *trial_flags(params)])
        except ValueError as error:
            raise RunError(f"--tune: {side} {trial_name(index)}: {error}") from None


def tune_side(
    side: str, data: DataArguments, args: CompareRunArguments, studies: Studies, progress: Progress
) -> tuple[dict, bool]:
    """Trains this process's share of `side`'s N trials, waits for the others', and chooses one on validation.

    Returns:
        (results.json `tuning.<side>`, whether this process finished the study's last trial or found it finished).
    """
    output_dir, flags, space = (
        Path(args.output_dir),
        args.side_flags(side, budget=False),
        search_space(side, args.profile),
    )
    name = studies.side(side)
    sweep = Sweep(
        open_study(studies.storage, name, make_sampler(args.tune_sampler, data.seed), make_pruner(args.tune_pruner)),
        args.tune,
    )

    def train(trial: optuna.Trial) -> Outcome:
        params, slot = suggest(trial, space), sweep.index(sweep.frozen(trial.number))
        study = {"storage": studies.storage, "study": name, "trial": trial.number, "pruner": args.tune_pruner}
        run_dir, reused = train_side(
            sides.get(side),
            side_data(data, side, args.profile, data.seed),
            [*flags, *trial_flags(params)],
            trial_dir(output_dir, side, slot),
            args.retrain,
            env={TRIAL_ENV: json.dumps({**study, "parent": os.getpid()})},
        )
        record = read_run(run_dir)
        metric = record.data.headline_metric or "accuracy"
        value, pruned = record.validation[metric], record.training.stop_reason == "pruned"
        progress.stage(
            "%s %s %s %s: %svalidation %s %.4f",
            "reused" if reused else "trained",
            side,
            trial_name(slot),
            params,
            "pruned, " if pruned else "",
            wording.name(metric),
            value,
        )
        attrs = {"metric": metric, "validation": value, "steps": record.training.steps}
        attrs |= {"seconds": record.training.seconds, "validations": len(record.training.history or [])}
        return Outcome(TrialState.PRUNED if pruned else TrialState.COMPLETE, value, attrs)

    last = sweep.run(train, on_wait=lambda: progress.stage("waiting for %s trials training elsewhere", name))
    search = side_record(sweep, output_dir, side, args.tune_sampler)
    search["importances"] = importances(sweep.study)
    if search["selected"] is None:
        raise RunError(f"--tune: no trial of {side} completed (see {name} in {masked(studies.storage)}).")
    chosen = search["trials"][search["selected"]]
    progress.stage("chose %s %s on validation: %s", side, trial_name(chosen["number"]), chosen["params"])
    return search, last


def side_record(sweep: Sweep, output_dir: Path, side: str, sampler: str) -> dict:
    """results.json `tuning.<side>` read from the side's study: each slot's finished trial (or its last attempt)."""
    slots = sweep.slots()
    metric = next((t.user_attrs["metric"] for a in slots.values() for t in a if "metric" in t.user_attrs), "accuracy")
    trials = []
    for slot, attempts in enumerate(slots.values()):
        finished = [t for t in attempts if t.state in (TrialState.COMPLETE, TrialState.PRUNED)]
        trial = (finished or attempts)[-1]
        attrs = trial.user_attrs
        trials.append(
            {
                "number": slot,
                "trial": trial.number,
                "state": trial.state.name.lower(),
                "params": trial.params,
                f"validation_{metric}": attrs.get("validation", trial.value),
                "pruned_at": max(trial.intermediate_values, default=None) if trial.state == TrialState.PRUNED else None,
                "steps": attrs.get("steps"),
                "seconds": attrs.get("seconds"),
                "run": str(trial_dir(output_dir, side, slot)),
            }
        )
    return tuning_record(trials, metric, expected=sampler == "random", study=sweep.study.study_name)


def other_runs(
    data: DataArguments, args: CompareRunArguments, tuning: dict, names: list[str]
) -> dict[str, tuple[str, DataArguments, list[str], Path]]:
    """The trainings besides the tuning trials, by key: each untuned side's runs (one per seed), and each chosen
    trial again for the other seeds; (side, data options, flags, run directory)."""
    output_dir, seeds = Path(args.output_dir), [data.seed + i for i in range(args.seeds)]
    found = {}
    for side in names:
        if side in tuning:
            chosen = tuning[side]["trials"][tuning[side]["selected"]]
            flags = [*args.side_flags(side, budget=False), *trial_flags(chosen["params"])]
            for seed in seeds[1:]:
                run_dir = trial_dir(output_dir, side, chosen["number"], seed)
                found[f"{side}-seed{seed}"] = (side, side_data(data, side, args.profile, seed), flags, run_dir)
        else:
            for (_, seed), run_dir in run_dirs(output_dir, seeds, [side]).items():
                found[run_dir.name] = (side, side_data(data, side, args.profile, seed), args.side_flags(side), run_dir)
    return found


def train_others(
    runs: dict[str, tuple[str, DataArguments, list[str], Path]], args: CompareRunArguments, studies: Studies, progress
) -> tuple[str | None, bool]:
    """Trains this process's share of `runs` as the trials of a grid study, and waits for the others'.

    Returns:
        (the grid study's name, None when there is nothing to train; whether this process finished its last trial or
        found it finished).
    """
    if not runs:
        return None, True
    what = json.dumps({key: [side, data.to_dict(), flags] for key, (side, data, flags, _) in runs.items()})
    name = f"{studies.name}/runs-{hashlib.sha256(what.encode()).hexdigest()[:10]}"

    def training(side: str, data: DataArguments, flags: list[str], run_dir: Path):
        def train() -> None:
            _, reused = train_side(sides.get(side), data, flags, run_dir, args.retrain)
            progress.stage("%s %s (seed %d): %s", "reused" if reused else "trained", side, data.seed, run_dir)

        return train

    def wait() -> None:
        progress.stage("waiting for %s runs training elsewhere", name)

    work = {key: training(*run) for key, run in runs.items()}
    return name, run_grid(studies.storage, name, work, studies.fingerprint, studies.described, wait)
