"""Tiny fine-tuning runs shared by the tests of this folder (each costs a model trace, so they are built once)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import separable_rows, write_csv


@pytest.fixture(scope="session")
def runs_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("finetune")


@pytest.fixture(scope="session")
def train_file(runs_dir: Path) -> Path:
    return write_csv(runs_dir / "train.csv", separable_rows(200))


@pytest.fixture(scope="session")
def base_run(tiny_runs: dict[str, Path]) -> Path:
    """Two epochs of the tiny BERT on 200 separable rows (about 20 steps per epoch; the same rows as `train_file`):
    the session's fine-tuned tiny run, which the other packages' tests read too."""
    return tiny_runs["finetune"]
