"""Finding report directories and the runs a report was made from, even after the report was moved.

Used by `compare bench --report DIR` and by the app (`python app.py --report DIR`, or the newest report).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from core.classifier import find_runs

RESULTS = "results.json"


def find_newest_report(roots: Iterable[Path]) -> Path | None:
    """The report directory (one holding results.json) under `roots` whose results were written last."""
    found = [p.parent for root in roots if root.is_dir() for p in root.glob(f"**/{RESULTS}")]
    return max(found, key=lambda d: (d / RESULTS).stat().st_mtime, default=None)


def locate_run(report_dir: Path, name: str, path: str) -> Path | None:
    """A report's run by its recorded path (absolute, or relative to the report or the working directory),
    else by name under the report's runs/ folder (a tuned side's chosen trial under runs/tune/<name>/), so a
    report directory that was moved still finds its runs."""
    recorded = Path(path)
    candidates = (
        recorded,
        report_dir / recorded,
        report_dir / "runs" / recorded.name,
        report_dir / "runs" / name,
        report_dir / "runs" / "tune" / name / recorded.name,
    )
    for candidate in candidates:
        if (candidate / "run.json").is_file():
            return candidate
    return None


def recorded_runs(report_dir: Path) -> dict[str, Path]:
    """The runs results.json names, by model name, that can be found (see `locate_run`)."""
    try:
        named = json.loads((report_dir / RESULTS).read_text(encoding="utf-8")).get("runs") or {}
    except (OSError, ValueError, AttributeError):
        named = {}
    located = {name: locate_run(report_dir, name, str(path)) for name, path in named.items()}
    return {name: path for name, path in located.items() if path is not None}


def report_run_dirs(report_dir: Path) -> list[Path]:
    """The runs a report was made from (results.json `runs`), else every run under its runs/ folder."""
    found = list(recorded_runs(report_dir).values())
    if found:
        return found
    return find_runs([report_dir / "runs"]) if (report_dir / "runs").is_dir() else []
