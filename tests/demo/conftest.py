"""Fixtures of the demo's tests: fake models and the tiny trained models, loaded as the app loads them (the tiny
runs, the translation run and compare's report over them are session fixtures in tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from demo.sources import load_models
from tests.demo.fakes import FakeClassifier, FakeScratch


@pytest.fixture
def fakes() -> dict[str, Any]:
    return {"finetune": FakeClassifier("finetune"), "scratch": FakeScratch()}


@pytest.fixture
def three(fakes: dict[str, Any]) -> dict[str, Any]:
    """The fakes and a distilled student, a shallower from-scratch model, as `compare run --distill` names them."""
    return {**fakes, "scratch-distilled": FakeScratch("scratch-distilled", layers=1, heads=2)}


@pytest.fixture(scope="module")
def real_models(tiny_runs: dict[str, Path]) -> dict[str, Any]:
    """The two tiny finished runs, loaded the way the app loads them."""
    models, problems = load_models([tiny_runs["finetune"], tiny_runs["scratch"]])
    assert problems == [] and list(models) == ["finetune", "scratch"]
    return models
