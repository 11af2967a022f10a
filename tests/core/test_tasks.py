"""core.tasks: where the local task mirrors are found without any option, in order."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.args import DataArguments
from core.tasks import find_data_dir


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checkout at tmp/project with nothing beside it, no $TEXTCLS_DATA_DIR, and the working directory elsewhere."""
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.delenv("TEXTCLS_DATA_DIR", raising=False)
    monkeypatch.setattr("core.tasks.ROOT", root)
    (tmp_path / "elsewhere" / "data").mkdir(parents=True)  # beside the working directory, not the project
    monkeypatch.chdir(tmp_path / "elsewhere")
    return root


def test_the_environment_comes_first(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project.parent / "shared" / "data").mkdir(parents=True)
    monkeypatch.setenv("TEXTCLS_DATA_DIR", "/mirror")
    assert find_data_dir() == "/mirror"


def test_then_shared_data_beside_the_project_then_its_own_data(project: Path) -> None:
    assert find_data_dir() is None  # ./data beside the working directory does not count
    (project / "data").mkdir()
    assert find_data_dir() == str(project / "data")
    (project.parent / "shared" / "data").mkdir(parents=True)
    assert find_data_dir() == str(project.parent / "shared" / "data")


def test_the_options_take_what_is_found_unless_given(project: Path) -> None:
    assert DataArguments(task="sst2").data_dir is None
    (project / "data").mkdir()
    assert DataArguments(task="sst2").data_dir == str(project / "data")
    assert DataArguments(task="sst2", data_dir="/other").data_dir == "/other"
