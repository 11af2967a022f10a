"""Tiny fine-tuning runs shared by the tests of this folder (each costs a model trace, so they are built once)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import built_once, separable_rows, write_csv
from tests.finetune.tiny import CASES, case_name, kind_options, train_tiny_run, write_kind_csv


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


@pytest.fixture(scope="session")
def kind_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, bool], Path]:
    """Two epochs of the tiny BERT with --no-onnx on 200 rows of each case (`tests.finetune.tiny.kind_rows`)."""

    def build(folder: Path) -> dict[tuple[str, bool], Path]:
        runs = {}
        for problem, pairs in CASES:
            name = case_name((problem, pairs))
            train = write_kind_csv(folder / f"{name}.csv", problem, pairs)
            runs[problem, pairs] = train_tiny_run(folder / name, train, no_onnx=True, **kind_options(problem, pairs))
        return runs

    return built_once(tmp_path_factory, "finetune-kinds", build)
