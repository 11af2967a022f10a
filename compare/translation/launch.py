"""Getting a translation run: reusing the finished one already there, or training it with `python -m scratch`.

As for classification (`compare.run.launch`): the side runs as a subprocess logging to `<run>.log`, and a
finished run is reused when its run.json records the same data options and `<run>.request.json` the same
flags and option defaults.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import sys
import time
from pathlib import Path

from compare.run.launch import absolute_paths, log_path, request_path
from core.pairs import PairDataArguments
from core.processes import run_command
from core.rundir import RunError, write_json
from core.translator import read_translation_run

logger = logging.getLogger(__name__)

PATH_OPTIONS = ("train_file", "validation_file", "test_file", "data_dir")


def data_flags(data: PairDataArguments) -> list[str]:
    """PairDataArguments as command-line flags, None fields left out."""
    flags = []
    for f in dataclasses.fields(PairDataArguments):
        value = getattr(data, f.name)
        if value is not None:
            flags += ["--" + f.name.replace("_", "-"), str(value)]
    return flags


def translation_defaults() -> dict:
    """The default of every option of the translator's command, as JSON would give it back."""
    from scratch.translation.args import TranslationArguments  # option classes only: no training code runs

    return json.loads(json.dumps({f.name: f.default for f in dataclasses.fields(TranslationArguments)}))


def reusable(data: PairDataArguments, flags: list[str], run_dir: Path) -> bool:
    if not (run_dir / "run.json").is_file() or not request_path(run_dir).is_file():
        return False
    try:
        run = read_translation_run(run_dir)
        request = json.loads(request_path(run_dir).read_text(encoding="utf-8"))
    except (RunError, ValueError):
        return False
    if run["data"]["options"] != data.to_dict() or request.get("flags") != list(flags):
        return False
    return request.get("defaults") == translation_defaults()


def train_translation(
    data: PairDataArguments, flags: list[str], run_dir: str | Path, retrain: bool = False
) -> tuple[Path, bool]:
    """Trains a translation run into `run_dir` unless an equivalent finished run is there.

    Returns:
        (the run directory, whether it was reused).
    Raises:
        core.processes.ProcessError: the command failed; the message carries its error line or log's end.
    """
    run_dir, data, flags = Path(run_dir), absolute_paths(data, PATH_OPTIONS), list(flags)
    if not retrain and reusable(data, flags, run_dir):
        logger.info("Reusing %s (same data options and flags)", run_dir)
        return run_dir, True
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    request_path(run_dir).unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "scratch", *data_flags(data), "--output-dir", str(run_dir), "--overwrite", *flags]
    logger.info("Training %s: %s (log: %s)", run_dir.name, " ".join(cmd[1:]), log_path(run_dir))
    start = time.perf_counter()
    run_command(cmd, log=log_path(run_dir))
    read_translation_run(run_dir)
    record = {
        "schema_version": 1,
        "side": "scratch",
        "flags": flags,
        "defaults": translation_defaults(),
        "command": cmd[1:],
    }
    write_json(request_path(run_dir), record)
    logger.info("Trained %s in %.0f s", run_dir, time.perf_counter() - start)
    return run_dir, False
