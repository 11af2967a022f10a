"""`python -m finetune <data options> --output-dir DIR [--model ...] [--epochs N] ...`: one fine-tuning run."""

from __future__ import annotations

import sys
from pathlib import Path

from core.args import DataArguments, RunArguments
from core.cli import run_command
from finetune.args import FinetuneArguments


def train(data_args: DataArguments, run_args: RunArguments, args: FinetuneArguments) -> Path:
    from finetune.run import train  # imports TensorFlow, after the command line chose how verbose it is

    return train(data_args, run_args, args)


def main(argv: list[str] | None = None) -> int:
    """Trains one run; bad data, options, output directories and checkpoints end in one `error:` line (exit 2)."""
    return run_command(argv, (DataArguments, RunArguments, FinetuneArguments), train)


if __name__ == "__main__":
    sys.exit(main())
