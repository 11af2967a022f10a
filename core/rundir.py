"""The run-directory contract: where a run is written, how it becomes complete, and its `run.json`.

A run is written into `DIR.partial/` and renamed to `DIR` only once `run.json` is in place, so a
directory named `DIR` is always a finished run and nothing half-written is ever loaded.

`run.json` itself is `core.record`'s: one typed record, read through `read_run` and written through `write_run`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import platform
import shutil
import tempfile
from pathlib import Path
from typing import Any

from core.errors import UserError

logger = logging.getLogger(__name__)

RUN_JSON = "run.json"
RESUME_FILE = "resume.json"
SAVED_MODEL_DIR = "saved_model"  # a TensorFlow SavedModel folder, in a translation run and in a serving export


class RunError(UserError):
    """A run directory that cannot be used or written, with what to do about it."""


def partial_path(output_dir: str | Path) -> Path:
    output_dir = Path(output_dir)
    return output_dir.with_name(output_dir.name + ".partial")


def check_run_dir(output_dir: str | Path, overwrite: bool = False, resume: bool = False) -> None:
    """Raises the `RunError` that `start_run` would, without touching anything: call it before slow work.

    An unfinished run in `DIR.partial/` is continued only with `resume` and discarded only with `overwrite`; without
    either it is refused (`UnfinishedRun`), so that rerunning a command never loses hours of training silently.
    """
    output_dir = Path(output_dir)
    if output_dir.exists() and not overwrite:
        if resume:
            raise RunError(f"{output_dir} is already a finished run; there is nothing to resume. Use --overwrite.")
        raise RunError(f"{output_dir} already exists. Pass --overwrite to replace it, or choose another --output-dir.")
    if resume and not partial_path(output_dir).is_dir():
        raise RunError(f"--resume: no unfinished run at {partial_path(output_dir)}; start without --resume.")
    if not (resume or overwrite) and partial_path(output_dir).is_dir():
        raise UnfinishedRun(output_dir)


class UnfinishedRun(RunError):
    """A new run into a directory whose `DIR.partial/` holds an unfinished run; `message(command)` names the
    command that resumes it."""

    def __init__(self, output_dir: str | Path) -> None:
        self.partial = partial_path(output_dir)
        super().__init__(self.message())

    def message(self, resume_command: str | None = None) -> str:
        how = f"resume it with: {resume_command}" if resume_command else "resume it with --resume"
        return f"{self.partial} holds an unfinished run ({kept_so_far(self.partial)}); {how}, or pass --overwrite to start again."


def kept_so_far(partial: str | Path) -> str:
    """What an unfinished run directory holds, in words: "2 epochs finished, 120 steps" or "no epoch finished yet".

    Read from its training log (one line per finished epoch, `core.training.log`; a redone epoch counts once),
    counting only the epochs its backup holds: an epoch logged but interrupted before its backup is redone.
    """
    from core.training.log import HISTORY_FILE  # (imports TensorFlow, which every training process has loaded)
    from core.training.loop import backed_up_epochs

    epochs: dict[int, dict] = {}
    path = Path(partial) / HISTORY_FILE
    backed_up = backed_up_epochs(Path(partial))
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            with contextlib.suppress(ValueError, TypeError, KeyError):
                row = json.loads(line)
                if int(row["epoch"]) <= backed_up:
                    epochs[int(row["epoch"])] = row
    if not epochs:
        return "no epoch finished yet"
    steps = epochs[max(epochs)].get("steps")
    counted = f"{len(epochs)} epoch{'s' if len(epochs) != 1 else ''} finished"
    return f"{counted}, {steps} steps" if isinstance(steps, int) else counted


def start_run(
    output_dir: str | Path,
    overwrite: bool = False,
    resume: bool = False,
    chief: bool = True,
    keep: dict[str, dict[str, Any]] | None = None,
) -> Path:
    """Prepares `DIR.partial/` for writing and returns it.

    Refuses an existing finished `DIR` unless `overwrite`; with `resume`, keeps what `DIR.partial/` holds, and
    refuses an unfinished one unless `resume` or `overwrite` (`check_run_dir`).
    `keep` ({group: {name: value}}, e.g. the data's fingerprints and the model's shape) is what a resumed run
    must share with the run it continues: it is written to `DIR.partial/resume.json`, and `resume` with other
    values is refused, naming them. A non-chief worker of a multi-worker run trains like the chief but writes
    into a temporary directory that `finish_run` removes, so only the chief writes `DIR`.
    """
    if not chief:
        return Path(tempfile.mkdtemp(prefix="textcls-worker-"))
    check_run_dir(output_dir, overwrite, resume)
    partial = partial_path(output_dir)
    if resume:
        _check_resumable(partial, keep)
        logger.info("Resuming the unfinished run in %s", partial)
    elif partial.exists():  # --overwrite: check_run_dir refuses it otherwise
        logger.info("--overwrite: discarding the unfinished run in %s", partial)
        shutil.rmtree(partial)
    partial.mkdir(parents=True, exist_ok=True)
    if keep is not None and not (partial / RESUME_FILE).is_file():
        write_json(partial / RESUME_FILE, keep)
    return partial


def _check_resumable(partial: Path, keep: dict[str, dict[str, Any]] | None) -> None:
    path = partial / RESUME_FILE
    if keep is None or not path.is_file():
        return
    before = json.loads(path.read_text(encoding="utf-8"))
    now = json.loads(json.dumps(keep, default=jsonable))

    def flat(groups: dict) -> dict[str, Any]:
        return {f"{group}.{name}": value for group, values in groups.items() for name, value in values.items()}

    before, now = flat(before), flat(now)
    changed = [key for key in sorted(before.keys() | now.keys()) if before.get(key) != now.get(key)]
    if changed:
        listed = "; ".join(f"{key} {before.get(key)!r} then, {now.get(key)!r} now" for key in changed[:4])
        raise RunError(
            f"--resume: {partial} was started with other data or another model ({listed}). Rerun with the options "
            "it was started with, or start again with --overwrite."
        )


def finish_run(partial: str | Path, output_dir: str | Path, chief: bool = True) -> Path:
    """Checks `run.json` in `partial` (of whatever task kind it records) and renames it to `output_dir`, replacing an
    older run there.

    On a non-chief worker, removes its temporary directory instead. `resume.json`, needed only while the run is
    unfinished, is removed.
    """
    partial, output_dir = Path(partial), Path(output_dir)
    if not chief:
        shutil.rmtree(partial, ignore_errors=True)
        return output_dir
    from core.record import read_run  # (the record module builds on this one)

    read_run(partial, task=None)
    (partial / RESUME_FILE).unlink(missing_ok=True)
    replace_dir(partial, output_dir)
    logger.info("Run complete: %s", output_dir)
    return output_dir


def replace_dir(source: Path, target: Path) -> None:
    """Renames the directory `source` to `target`. An older `target` is moved aside first and removed after, so a
    failure leaves the old directory or the new one at `target`, and a reader never sees half of either."""
    if not target.exists():
        source.rename(target)
        return
    old = target.with_name(target.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    target.rename(old)
    try:
        source.rename(target)
    except OSError:
        old.rename(target)
        raise
    shutil.rmtree(old)


def write_json(path: str | Path, payload: Any) -> None:
    """Writes JSON atomically: a reader sees the old file or the new one, never half of one."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(payload, indent=2, ensure_ascii=False, default=jsonable) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def jsonable(value: Any) -> Any:
    """`json.dumps`' `default` for numpy scalars and arrays."""
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def package_version(package: str) -> str | None:
    """The installed version of `package`, or None when it is not installed."""
    import importlib.metadata as metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def environment(packages: tuple[str, ...] = ()) -> dict[str, Any]:
    """Versions and machine facts recorded with every run and report, and the versions of `packages` too."""
    version = package_version
    return {
        "python": platform.python_version(),
        "tensorflow": version("tensorflow"),
        "tf_keras": version("tf-keras"),
        "transformers": version("transformers"),
        "platform": platform.platform(),
        "processor": platform.machine(),
        "cpu_count": os.cpu_count(),
        **{package: version(package) for package in packages},
    }


def dir_size(path: str | Path) -> int:
    """Bytes on disk of every file under `path`."""
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())


def check_teacher_splits(teacher: str | Path, theirs: dict[str, str], ours: dict[str, str], source: str) -> None:
    """Raises `RunError` unless a `--teacher` run saw the same splits (`data.fingerprints`) as the student's data,
    so that the student learns nothing from a teacher that saw its validation or test examples."""
    for split in sorted(set(ours) | set(theirs)):
        if ours.get(split) != theirs.get(split):
            raise RunError(
                f"--teacher {teacher} saw another {split} split than this run's data ({source}): fingerprint "
                f"{str(theirs.get(split))[:12]} (teacher) versus {str(ours.get(split))[:12]} (this run). Train the "
                "student with the teacher's data options (task or files, --max-train-samples, --seed)."
            )
