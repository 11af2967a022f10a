"""Tiny finished runs shared by the scratch tests that only read them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import built_once
from tests.scratch.kinds import train_kind_run
from tests.scratch.tiny import train_tiny_run


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory) -> Path:
    return built_once(
        tmp_path_factory, "scratch-tiny", lambda folder: train_tiny_run(folder / "run", folder / "train.csv")
    )


@pytest.fixture(scope="session")
def kind_run(tmp_path_factory) -> Callable[[str, bool], Path]:
    """`kind_run(problem_type, pairs)`: a finished tiny run of that kind (`tests.scratch.kinds`), trained once."""
    runs: dict[tuple[str, bool], Path] = {}

    def get(problem_type: str, pairs: bool) -> Path:
        if (problem_type, pairs) not in runs:
            name = f"scratch-{problem_type}-{'pairs' if pairs else 'texts'}"
            runs[problem_type, pairs] = built_once(
                tmp_path_factory, name, lambda folder: train_kind_run(folder, problem_type, pairs, max_steps=40)
            )
        return runs[problem_type, pairs]

    return get
