"""A tiny finished translation run on the toy task, trained once per session for the tests that read it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scratch.translation.toy import toy_pairs, write_tsv

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


@pytest.fixture(scope="session")
def toy_file(tmp_path_factory) -> Path:
    return write_tsv(tmp_path_factory.mktemp("toy") / "train.tsv", toy_pairs(3000))


@pytest.fixture(scope="session")
def tiny_translation_run(toy_file, tmp_path_factory) -> Path:
    from scratch.translation.train import main

    return main(tiny_command(toy_file, tmp_path_factory.mktemp("translation") / "run"))
