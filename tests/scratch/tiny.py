"""A finished tiny scratch run for tests, here and in other packages' tests (keep the signature)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scratch.__main__ import main
from tests.conftest import separable_rows, write_csv

# The tiny preset learns the separable fixture within these settings: at most 200 optimizer steps.
TINY_SETTINGS = {
    "preset": "tiny",
    "epochs": 20,
    "batch_size": 16,
    "learning_rate": 3e-3,
    "warmup_steps": 20,
    "max_steps": 200,
}


def tiny_argv(output_dir: Path, train_file: Path, **overrides) -> list[str]:
    """The command line of a tiny run; `overrides` are option names with underscores (True for a flag)."""
    argv = ["--train-file", str(train_file), "--output-dir", str(output_dir)]
    for key, value in {**TINY_SETTINGS, **overrides}.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            argv.append(flag)
        elif value is not None and value is not False:
            argv.extend([flag, str(value)])
    return argv


def train_tiny_run(output_dir: Path, train_file: Path, **overrides) -> Path:
    """Trains the `tiny` preset on `train_file` (written with 200 separable rows if it does not exist).

    Returns the finished run directory.
    """
    train_file = Path(train_file)
    if not train_file.exists():
        train_file.parent.mkdir(parents=True, exist_ok=True)
        write_csv(train_file, separable_rows(200))
    main(tiny_argv(Path(output_dir), train_file, **overrides))
    return Path(output_dir)


def refuse(argv: list[str], capsys) -> str:
    """The `error:` line `python -m scratch argv` ends with, once it has exited with status 2."""
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    return capsys.readouterr().err.strip().splitlines()[-1]
