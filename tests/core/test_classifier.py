from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.classifier import find_runs, load
from core.rundir import RunError, write_run_json
from tests.core.test_rundir import record


def test_load_refuses_a_missing_run(tmp_path: Path) -> None:
    with pytest.raises(RunError, match="does not exist"):
        load(tmp_path / "missing")


def test_find_runs_expands_a_parent_directory(tmp_path: Path) -> None:
    for side in ("finetune", "scratch"):
        (tmp_path / side).mkdir()
        write_run_json(tmp_path / side, record(side))
    (tmp_path / "notes").mkdir()
    assert find_runs([tmp_path]) == [tmp_path / "finetune", tmp_path / "scratch"]
    assert find_runs([tmp_path / "scratch"]) == [tmp_path / "scratch"]
    with pytest.raises(RunError, match="no run.json"):
        find_runs([tmp_path / "notes"])


def test_load_points_a_translation_run_to_the_translator(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text(json.dumps({"schema_version": 1, "side": "scratch", "task_kind": "translation"}))
    with pytest.raises(RunError, match="is a translation run, not a classifier; load it with core.translator.load"):
        load(tmp_path)
