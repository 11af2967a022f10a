"""`python -m scratch <data options> --output-dir DIR [--preset ...] [--epochs N] ...`: one from-scratch run."""

from __future__ import annotations

import sys
from pathlib import Path

from core.args import DataArguments, RunArguments
from core.cli import run_command
from scratch.args import ScratchArguments


def train(data_args: DataArguments, run_args: RunArguments, args: ScratchArguments) -> Path:
    from scratch.run import train  # imports TensorFlow, after the command line chose how verbose it is

    return train(data_args, run_args, args)


def main(argv: list[str] | None = None) -> int:
    """Trains one run; bad data, options and output directories end in one `error:` line (exit 2)."""
    return run_command(argv, (DataArguments, RunArguments, ScratchArguments), train)


if __name__ == "__main__":
    sys.exit(main())
