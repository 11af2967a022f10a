"""Getting one run: reusing the finished run already there, or starting the side's command to train it.

Compare never imports training code (only the sides' option classes, to read their defaults): each side's
command (`core.sides`: `python -m finetune ...`, `python -m scratch ...`) runs as a subprocess through
`core.processes` (which also hands their memory back between stages), logging to `<run>.log` beside the run.
A finished run is reused when its run.json records the same data options and `<run>.request.json` (written
here after a successful training) the same side, flags and option defaults: a run trained before a default
changed (say, a new warmup) is trained again. An interrupted one is resumed: `<run>.pending.json`, written before
the side starts, holds the same request with the data options, and when it matches the new request the side is
started with `--resume`, continuing from the backup in `<run>.partial/` (docs/formats.md, "compare run's files").
The same holds for a translation run: the from-scratch side under the translation task (`python -m scratch` on a
translation task). Each function takes the side as its object (`core.sides.Side`, under its task), looked up by
name where the name entered.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import sys
import time
from pathlib import Path

from compare.progress import Heartbeat
from core import record, sides
from core.args import DataArguments
from core.pairs import PairDataArguments
from core.processes import run_command
from core.rundir import RunError, kept_so_far, partial_path, write_json

logger = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 30.0  # the longest a training side goes without a line on compare's terminal
PATH_OPTIONS = ("train_file", "validation_file", "test_file", "labels_file", "data_dir")


def absolute_paths(data, options: tuple[str, ...] = PATH_OPTIONS):
    """The same data options (a DataArguments, or PairDataArguments with their `options`) with the file and
    folder paths among `options` made absolute, so a run records where its data is.

    Symbolic links stay as given (no `resolve`), so a side run directly and the same run launched from here
    record the same paths.
    """
    changes = {name: os.path.abspath(getattr(data, name)) for name in options if getattr(data, name, None)}
    return dataclasses.replace(data, **changes)


def data_flags(data: DataArguments | PairDataArguments) -> list[str]:
    """Data options as command-line flags (`--task sst2 --max-length 128 ...`), None fields left out."""
    flags = []
    for f in dataclasses.fields(data):
        value = getattr(data, f.name)
        if value is None or value is False:
            continue
        flag = "--" + f.name.replace("_", "-")
        if value is True:  # a boolean is a flag
            flags.append(flag)
            continue
        flags += [flag, *map(str, value)] if isinstance(value, list) else [flag, str(value)]
    return flags


def run_dirs(output_dir: Path, seeds: list[int], names: list[str] | None = None) -> dict[tuple[str, int], Path]:
    """Where each (side, seed) run of the sides `names` (default: those always compared) lives."""
    runs, names = output_dir / "runs", sides.classifier_names() if names is None else names
    if len(seeds) == 1:
        return {(side, seeds[0]): runs / side for side in names}
    return {(side, seed): runs / f"{side}-seed{seed}" for seed in seeds for side in names}


def request_path(run_dir: Path) -> Path:
    return run_dir.with_name(run_dir.name + ".request.json")


def pending_path(run_dir: Path) -> Path:
    return run_dir.with_name(run_dir.name + ".pending.json")


def log_path(run_dir: Path) -> Path:
    return run_dir.with_name(run_dir.name + ".log")


def side_defaults(side: sides.Side) -> dict:
    """The default of every model option of `side`'s command under its task, as JSON would give it back."""
    arguments = side.options()
    return json.loads(json.dumps({f.name: f.default for f in dataclasses.fields(arguments)}))


def request_record(side: sides.Side, flags: list[str], cmd: list[str]) -> dict:
    """What `<run>.request.json` holds: enough to tell whether the same request would train the same run."""
    return {
        "schema_version": 1,
        "side": side.command,
        "flags": list(flags),
        "defaults": side_defaults(side),
        "command": cmd,
    }


def command(
    side: sides.Side, data: DataArguments | PairDataArguments, flags: list[str], run_dir: Path, resume: bool = False
) -> list[str]:
    """The side's command line: a new run (`--overwrite`: an unfinished one of another request is discarded), or
    with `resume` the unfinished one in `<run>.partial/` continued (`--resume`)."""
    start = "--resume" if resume else "--overwrite"
    return [
        sys.executable,
        "-m",
        side.command,
        *data_flags(data),
        "--output-dir",
        str(run_dir),
        start,
        *flags,
    ]


def resumable(side: sides.Side, data: DataArguments | PairDataArguments, flags: list[str], run_dir: Path) -> bool:
    """Whether `<run>.partial/` holds a run this very request started and an interruption stopped."""
    if not partial_path(run_dir).is_dir() or not pending_path(run_dir).is_file():
        return False
    try:
        pending = json.loads(pending_path(run_dir).read_text(encoding="utf-8"))
    except ValueError:
        return False
    wanted = {**request_record(side, flags, []), "data": data.to_dict()}
    return all(pending.get(key) == wanted[key] for key in ("side", "flags", "defaults", "data"))


def read_run(side: sides.Side, run_dir: Path) -> record.RunRecord:
    """The finished run of `side` in `run_dir`, read as a run of the side's task."""
    return record.read_run(run_dir, side.task)


def reusable(side: sides.Side, data: DataArguments | PairDataArguments, flags: list[str], run_dir: Path) -> bool:
    """Whether `run_dir` is a finished run of `side` with these data options, flags and option defaults."""
    if not (run_dir / "run.json").is_file() or not request_path(run_dir).is_file():
        return False
    try:
        run = read_run(side, run_dir)
        request = json.loads(request_path(run_dir).read_text(encoding="utf-8"))
    except (RunError, ValueError):
        return False
    same = sides.of_run(run) == side and run.data.options == data.to_dict()
    if not same or request.get("flags") != list(flags):
        return False
    if request.get("defaults") != side_defaults(side):
        logger.info(
            "Not reusing %s: the defaults of python -m %s changed since it was trained",
            run_dir,
            side.command,
        )
        return False
    return True


def train_side(
    side: sides.Side,
    data: DataArguments | PairDataArguments,
    flags: list[str],
    run_dir: str | Path,
    retrain: bool = False,
    env: dict[str, str] | None = None,
) -> tuple[Path, bool]:
    """Trains `side` into `run_dir` unless an equivalent finished run is there already.

    Args:
        side: the side (`core.sides.Side`), under the task it trains for: `finetune`, `scratch` (a classifier, or
            under the translation task a translator), ...
        data: the data options (file paths are made absolute).
        flags: model flags for the side's command (e.g. `["--epochs", "1"]`).
        run_dir: the run directory to write or reuse.
        retrain: train again even if an equivalent run exists.
        env: extra environment variables for the side's command (a tuning trial's study, `core.training.pruning`).
    Returns:
        (the run directory, whether it was reused).
    Raises:
        core.processes.ProcessError: the command failed; the message carries its error line or log's end.
    """
    run_dir, data, flags = Path(run_dir), absolute_paths(data), list(flags)
    if not retrain and reusable(side, data, flags, run_dir):
        logger.info("Reusing %s (same data options and flags)", run_dir)
        return run_dir, True
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    request_path(run_dir).unlink(missing_ok=True)
    resume = not retrain and resumable(side, data, flags, run_dir)
    cmd = command(side, data, flags, run_dir, resume)
    if resume:
        kept = kept_so_far(partial_path(run_dir))
        logger.info("Resuming %s from its unfinished run (%s): %s", side.name, kept, " ".join(cmd[1:]))
    else:
        logger.info("Training %s: %s (log: %s)", side.name, " ".join(cmd[1:]), log_path(run_dir))
    with contextlib.suppress(ImportError):  # a side whose options cannot be imported cannot start: its command says why
        write_json(pending_path(run_dir), {**request_record(side, flags, cmd[1:]), "data": data.to_dict()})
    start = time.perf_counter()
    with Heartbeat(run_dir.name, HEARTBEAT_SECONDS) as heartbeat:
        run_command(cmd, log=log_path(run_dir), append=resume, on_line=heartbeat.on_line, env=env)
    read_run(side, run_dir)
    write_json(request_path(run_dir), request_record(side, flags, cmd[1:]))
    pending_path(run_dir).unlink(missing_ok=True)
    logger.info("Trained %s in %.0f s", run_dir, time.perf_counter() - start)
    return run_dir, False
