"""The command line of a tiny translation run on the toy task (the session-wide run itself is `tiny_translation_run`
in tests/conftest.py, shared with the app's tests)."""

from __future__ import annotations

from pathlib import Path

import pytest

TINY_FLAGS = ["--preset", "tiny", "--epochs", "12", "--seed", "0", "--max-length", "32"]


def tiny_command(train_file: Path, output_dir: Path, *extra: str) -> list[str]:
    return [
        "--train-file",
        str(train_file),
        "--source-column",
        "pt",
        "--target-column",
        "en",
        "--output-dir",
        str(output_dir),
        *TINY_FLAGS,
        *extra,
    ]


def train_tiny(argv: list[str]) -> Path:
    """Runs `python -m scratch` on `argv` (a translation command line) in this process; returns its run directory."""
    from scratch.__main__ import main

    assert main(argv) == 0
    return Path(argv[argv.index("--output-dir") + 1])


def unexported(*args, **kwargs):
    """Stands in for the SavedModel export in a test that reads only the run's record, history, weights or cached
    files: test_train.py loads the export, as do the tests here that translate through it."""


@pytest.fixture
def no_export(monkeypatch):
    """Runs trained in the test skip their SavedModel export."""
    import scratch.translation.train as train_module

    monkeypatch.setattr(train_module, "save", unexported)
