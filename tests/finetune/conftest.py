"""Tiny fine-tuning runs shared by the tests of this folder (each costs a model trace, so they are built once)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import separable_rows, write_csv
from tests.finetune.tiny import train_tiny_run


@pytest.fixture(scope="session")
def runs_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("finetune")


@pytest.fixture(scope="session")
def train_file(runs_dir: Path) -> Path:
    return write_csv(runs_dir / "train.csv", separable_rows(200))


@pytest.fixture(scope="session")
def base_run(runs_dir: Path, train_file: Path) -> Path:
    """Two epochs of the tiny BERT on 200 separable rows (about 20 steps per epoch)."""
    return train_tiny_run(runs_dir / "base", train_file)
