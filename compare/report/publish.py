"""Writing a report directory so that it appears only when every file of it has been written.

The files are written into `DIR.partial/`. A new `DIR` is that directory renamed. An existing `DIR` (the
`compare run` output, holding `runs/`, or an older report) gets the new files moved in one by one, the
old report files that the new report does not have removed, and `results.json` last, so a reader who
sees the new `results.json` sees the whole new report. On any error `DIR.partial/` is deleted and `DIR` is
left as it was.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

from core.errors import UserError
from core.rundir import partial_path

MANIFEST = "report_files.json"  # the report's own files, so a later report knows what it replaces
RESULTS = "results.json"


class ReportDirError(UserError):
    """An output directory that a report may not be written into."""


@contextlib.contextmanager
def report_directory(output_dir: str | Path) -> Iterator[Path]:
    """Yields an empty `DIR.partial/` to write into; publishes it to `DIR` when the block succeeds."""
    output_dir = Path(output_dir)
    check_output_dir(output_dir)
    partial = partial_path(output_dir)
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    try:
        yield partial
        _publish(partial, output_dir)
    finally:
        shutil.rmtree(partial, ignore_errors=True)


def check_output_dir(output_dir: Path) -> None:
    """Refuses an output directory that exists and holds files that are not a report's (nor `runs/`)."""
    if not output_dir.exists():
        return
    if not output_dir.is_dir():
        raise ReportDirError(f"--output-dir {output_dir} is a file; choose a directory.")
    entries = {p.name for p in output_dir.iterdir()}
    foreign = entries - {"runs", MANIFEST, *_manifest(output_dir)}
    if foreign and RESULTS not in entries:
        raise ReportDirError(
            f"--output-dir {output_dir} already holds files that are not a report ({', '.join(sorted(foreign)[:3])}); "
            "choose a new or empty directory."
        )


def _manifest(output_dir: Path) -> list[str]:
    path = output_dir / MANIFEST
    if not path.is_file():
        return []
    try:
        return list(json.loads(path.read_text(encoding="utf-8"))["files"])
    except (ValueError, KeyError, TypeError):
        return []


def _publish(partial: Path, output_dir: Path) -> None:
    files = sorted(p.name for p in partial.iterdir())
    (partial / MANIFEST).write_text(json.dumps({"schema_version": 1, "files": files}) + "\n", encoding="utf-8")
    if not output_dir.exists():
        partial.rename(output_dir)
        return
    if (output_dir / RESULTS).exists():
        os.remove(output_dir / RESULTS)
    for name in set(_manifest(output_dir)) - set(files):
        target = output_dir / name
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
    for name in [*(f for f in files if f != RESULTS), MANIFEST, *(f for f in files if f == RESULTS)]:
        target = output_dir / name
        if target.is_dir():
            shutil.rmtree(target)
        os.replace(partial / name, target)
