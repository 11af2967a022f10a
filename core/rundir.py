"""The run-directory contract: where a run is written, how it becomes complete, and its `run.json`.

A run is written into `DIR.partial/` and renamed to `DIR` only once `run.json` is in place, so a
directory named `DIR` is always a finished run and nothing half-written is ever loaded.

`run.json` has one schema for every task kind (`REQUIRED`, and per kind `REQUIRED_NESTED`; docs/formats.md) and
one writer, `write_run_json`; `read_run_json` reads and checks it (`core.classifier` and `core.translator` read
through it). `core.record.run_record` builds the record a trainer writes.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import logging
import os
import platform
import shutil
import tempfile
from pathlib import Path
from typing import Any

from core import sides
from core.errors import UserError
from core.tasks import CLASSIFICATION, MULTI_LABEL, REGRESSION, SINGLE_LABEL, TRANSLATION

logger = logging.getLogger(__name__)

RUN_JSON = "run.json"
RESUME_FILE = "resume.json"
SAVED_MODEL_DIR = "saved_model"  # a TensorFlow SavedModel folder, in a translation run and in a serving export
SCHEMA_VERSION = 1
REQUIRED = {
    "side": str,
    "task_kind": str,
    "model": dict,
    "data": dict,
    "hyperparameters": dict,
    "training": dict,
    "validation": dict,
    "environment": dict,
}
TRAINING = ("seconds", "epochs_run", "best_epoch", "history", "examples_per_second")  # `core.callbacks.fit`'s
REQUIRED_NESTED = {
    CLASSIFICATION: {
        "model": ("name", "source", "params", "trainable_params"),
        "data": ("labels", "splits", "fingerprints", "options"),
        "training": TRAINING,
    },
    TRANSLATION: {
        "model": ("name", "source", "arch", "params", "trainable_params"),
        "data": ("splits", "fingerprints", "options", "columns"),
        "training": TRAINING,
        "validation": ("bleu", "chrf"),
    },
}
# A classification run's `validation` per problem type (`data.problem_type`, single label when absent; core.kinds).
VALIDATION_FIELDS = {
    SINGLE_LABEL: ("accuracy", "macro_f1"),
    MULTI_LABEL: ("macro_f1", "micro_f1"),
    REGRESSION: ("spearman", "pearson", "mse"),
}
ENVIRONMENT_PACKAGES = {CLASSIFICATION: (), TRANSLATION: ("tensorflow-text", "sentencepiece", "sacrebleu")}


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

    Read from its training log (one line per finished epoch, `core.training_log`); a redone epoch counts once.
    """
    from core.training_log import HISTORY_FILE  # (imports TensorFlow, which every training process has loaded)

    epochs: dict[int, dict] = {}
    path = Path(partial) / HISTORY_FILE
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            with contextlib.suppress(ValueError, TypeError, KeyError):
                row = json.loads(line)
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
    now = json.loads(json.dumps(keep, default=_jsonable))

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
    read_run_json(partial, kind=None)
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
    tmp.write_text(json.dumps(payload, indent=2, ensure_ascii=False, default=_jsonable) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _jsonable(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def task_kind(record: dict[str, Any]) -> str:
    """The record's task kind: `task_kind`, or classification for a run.json written before there were others."""
    return record.get("task_kind", CLASSIFICATION)


def problem_type(record: dict[str, Any]) -> str:
    """The kind of problem a classification run's record names (`data.problem_type`); single label for a run.json
    written before there were other kinds."""
    return record.get("data", {}).get("problem_type") or SINGLE_LABEL


def write_run_json(run_dir: str | Path, record: dict[str, Any]) -> dict[str, Any]:
    """The one writer of run.json: completes `record` (schema version, task kind, the environment with the kind's
    packages, time), checks it against its kind's schema and writes it atomically as `run_dir/run.json`."""
    kind = task_kind(record)
    record = {"schema_version": SCHEMA_VERSION, "task_kind": kind, **record}
    record.setdefault("environment", environment(ENVIRONMENT_PACKAGES.get(kind, ())))
    record.setdefault("created", _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"))
    validate_run(record, Path(run_dir) / RUN_JSON, kind)
    write_json(Path(run_dir) / RUN_JSON, record)
    return record


def read_run_json(run_dir: str | Path, kind: str | None = CLASSIFICATION) -> dict[str, Any]:
    """Reads and validates `run_dir/run.json` as a run of task `kind` (None: of the kind it records), with errors
    that say what is missing and what to do."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        partial = partial_path(run_dir)
        hint = f" An unfinished run is in {partial}; rerun its command with --resume." if partial.is_dir() else ""
        raise RunError(f"Run directory {run_dir} does not exist.{hint}")
    path = run_dir / RUN_JSON
    if not path.is_file():
        raise RunError(
            f"{run_dir} is not a finished run: it has no {RUN_JSON}. Train it with `python -m finetune` or "
            "`python -m scratch`, or rerun an interrupted run with --resume."
        )
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise RunError(f"{path} is not valid JSON ({error}); the run is damaged, train it again.") from None
    validate_run(record, path, kind)
    return record


def validate_run(record: Any, path: Path, kind: str | None = CLASSIFICATION) -> None:
    """Raises `RunError` naming what `record` (the run.json at `path`) lacks of the schema of task `kind` (None: of
    the kind it records), or that it records another kind."""
    if not isinstance(record, dict):
        raise RunError(f"{path} must hold a JSON object.")
    found = task_kind(record)
    if kind == TRANSLATION and found == CLASSIFICATION and record.get("side"):
        raise RunError(
            f"{path} is a classification run of the {record['side']} side, not a translation run; give a run "
            "trained on a translation task."
        )
    if kind is not None and found != kind:
        raise RunError(f"{path} is a {found!r} run, not a {kind} run.")
    if found not in REQUIRED_NESTED:
        raise RunError(f"{path}: task_kind {found!r} is not one of {', '.join(REQUIRED_NESTED)}.")
    if record.get("schema_version") != SCHEMA_VERSION:
        raise RunError(
            f"{path} has schema_version {record.get('schema_version')!r}; this suite reads {SCHEMA_VERSION}."
        )
    required = {key: type_ for key, type_ in REQUIRED.items() if key != "task_kind"}  # absent: classification
    for key, kind_of in required.items():
        if not isinstance(record.get(key), kind_of):
            raise RunError(f"{path} lacks {key!r} (a {kind_of.__name__}); the run is incomplete, train it again.")
    nested = dict(REQUIRED_NESTED[found])
    if found == CLASSIFICATION:
        problem = problem_type(record)
        if problem not in VALIDATION_FIELDS:
            raise RunError(f"{path}: data.problem_type {problem!r} is not one of {', '.join(VALIDATION_FIELDS)}.")
        nested["validation"] = VALIDATION_FIELDS[problem]
    for key, fields in nested.items():
        missing = [f for f in fields if f not in record[key]]
        if missing:
            raise RunError(f"{path}: {key!r} lacks {', '.join(missing)}; the run is incomplete, train it again.")
    try:
        sides.of_run(record)
    except ValueError as error:
        raise RunError(f"{path}: {error}") from None


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
