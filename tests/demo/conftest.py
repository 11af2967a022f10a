"""Fixtures of the demo's tests: fake models, the tiny trained models (the translation run is the one
tests/scratch/translation trains), and compare's report over them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from demo.sources import load_models
from tests.demo.fakes import FakeClassifier, FakeScratch, compare_report


@pytest.fixture
def fakes() -> dict[str, Any]:
    return {"finetune": FakeClassifier("finetune"), "scratch": FakeScratch()}


@pytest.fixture(scope="module")
def real_models(tiny_runs: dict[str, Path]) -> dict[str, Any]:
    """The two tiny finished runs, loaded the way the app loads them."""
    models, problems = load_models([tiny_runs["finetune"], tiny_runs["scratch"]])
    assert problems == [] and list(models) == ["finetune", "scratch"]
    return models


@pytest.fixture(scope="module")
def compared_report(tiny_runs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report `python -m compare report` writes over the two tiny runs."""
    return compare_report(tiny_runs, tmp_path_factory.mktemp("app-compared") / "report")
