"""A tiny finished run shared by the scratch tests that only read it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import built_once
from tests.scratch.tiny import train_tiny_run


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory) -> Path:
    return built_once(
        tmp_path_factory, "scratch-tiny", lambda folder: train_tiny_run(folder / "run", folder / "train.csv")
    )
