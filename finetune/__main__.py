"""`python -m finetune <data options> --output-dir DIR [--model ...] [--epochs N] ...`."""

from __future__ import annotations

import logging
import sys

from core.args import DataArguments, RunArguments, parse_args
from core.data import DataError
from core.rundir import RunError
from finetune.args import FinetuneArguments
from finetune.checkpoint import CheckpointError
from finetune.run import train


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    data_args, run_args, finetune_args = parse_args((DataArguments, RunArguments, FinetuneArguments), argv)
    try:
        train(data_args, run_args, finetune_args)
    except (CheckpointError, DataError, RunError) as error:
        raise SystemExit(f"error: {error}") from None
    return 0


if __name__ == "__main__":
    sys.exit(main())
