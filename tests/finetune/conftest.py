"""Tiny fine-tuning runs shared by the tests of this folder (each costs a model trace, so they are built once)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import built_once, separable_rows, write_csv
from tests.finetune.tiny import train_tiny_run


@pytest.fixture(scope="session")
def runs_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("finetune")


@pytest.fixture(scope="session")
def train_file(runs_dir: Path) -> Path:
    return write_csv(runs_dir / "train.csv", separable_rows(200))


@pytest.fixture(scope="session")
def base_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two epochs of the tiny BERT on 200 separable rows (about 20 steps per epoch; the same rows as `train_file`)."""

    def build(folder: Path) -> Path:
        return train_tiny_run(folder / "base", write_csv(folder / "train.csv", separable_rows(200)))

    return built_once(tmp_path_factory, "finetune-base", build)
