"""The command line of a tiny translation run on the toy task (the session-wide run itself is `tiny_translation_run`
in tests/conftest.py, shared with the app's tests)."""

from __future__ import annotations

from pathlib import Path

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
