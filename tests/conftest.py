"""Shared fixtures: tiny data written by the tests themselves, and the local dataset mirror."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

ROOT = Path(__file__).resolve().parents[1]

POSITIVE = ["a great film", "wonderful and moving", "i loved every minute", "superb acting", "a joy to watch"]
NEGATIVE = ["a dull mess", "boring and far too long", "i hated it", "terrible acting", "a waste of time"]


def mirror_dir() -> Path | None:
    """The local dataset mirror: $TEXTCLS_DATA_DIR, else ../shared/data beside the checkout."""
    for candidate in (os.environ.get("TEXTCLS_DATA_DIR"), ROOT.parent / "shared" / "data"):
        if candidate and (Path(candidate) / "sst2" / "train.csv").is_file():
            return Path(candidate)
    return None


@pytest.fixture
def data_dir() -> Path:
    found = mirror_dir()
    if found is None:
        pytest.skip("no local dataset mirror: set TEXTCLS_DATA_DIR to a folder holding sst2/ and emotion/")
    return found


def write_csv(path: Path, rows: list[tuple[str, object]], header: str = "text,label") -> Path:
    import csv

    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header.split(","))
        writer.writerows(rows)
    return path


def separable_rows(n: int, seed: int = 0) -> list[tuple[str, str]]:
    """`n` labelled rows that a bag of words separates perfectly: positive and negative phrases, mixed."""
    import random

    rng = random.Random(seed)
    rows = []
    for i in range(n):
        label = "positive" if i % 2 == 0 else "negative"
        pool = POSITIVE if label == "positive" else NEGATIVE
        rows.append((" ".join(rng.sample(pool, 2)), label))
    return rows


@pytest.fixture
def tiny_csv(tmp_path: Path) -> Path:
    """A 200-row two-class training file with string labels."""
    return write_csv(tmp_path / "train.csv", separable_rows(200))


@pytest.fixture(scope="session")
def tiny_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two finished tiny runs, one per side, trained on the same 200-row separable CSV.

    Both use the same data options (seed 0, max length 16), so their carved splits are identical.
    Returns {"finetune": run dir, "scratch": run dir, "train_file": the CSV}. Trained once per session.
    """
    from tests.finetune.tiny import train_tiny_run as train_finetune
    from tests.scratch.tiny import train_tiny_run as train_scratch

    root = tmp_path_factory.mktemp("tiny-runs")
    train_file = write_csv(root / "train.csv", separable_rows(200))
    return {
        "finetune": train_finetune(root / "finetune", train_file),
        "scratch": train_scratch(root / "scratch", train_file, seed=0, max_length=16),
        "train_file": train_file,
    }


@pytest.fixture(scope="session")
def toy_file(tmp_path_factory) -> Path:
    from tests.scratch.translation.toy import toy_pairs, write_tsv

    return write_tsv(tmp_path_factory.mktemp("toy") / "train.tsv", toy_pairs(3000))


@pytest.fixture(scope="session")
def tiny_translation_run(toy_file, tmp_path_factory) -> Path:
    from tests.scratch.translation.conftest import tiny_command, train_tiny

    return train_tiny(tiny_command(toy_file, tmp_path_factory.mktemp("translation") / "run"))
