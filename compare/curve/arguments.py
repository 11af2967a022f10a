"""Options of `compare curve` (`compare.curve.command`), free of TensorFlow so that its `--help` answers at once."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from compare.run.arguments import SideTrainingArguments
from compare.run.profiles import PROFILES
from core.args import DataArguments


@dataclass
class CurveDataArguments(DataArguments):
    """The data options, less `--max-train-samples`: the curve sets each point's train rows from `--sizes` (the
    option is still parsed, so that giving it is refused with that reason, `compare.curve.command`)."""

    max_train_samples: int | None = field(default=None, metadata={"help": argparse.SUPPRESS})


@dataclass
class CurveArguments(SideTrainingArguments):
    """Which train sizes, where the curve goes (its runs in output_dir/runs), and how the sides are trained."""

    profile: str = field(
        default="full",
        metadata={
            "help": "Model flags of the sides (the training budgets; the sizes set the train rows).",
            "choices": tuple(sorted(PROFILES)),
        },
    )
    sizes: str = field(default="500,2000,8000", metadata={"help": "Train-set sizes, comma-separated."})
    storage: str | None = field(
        default=None,
        metadata={
            "help": "Where the grid studies of the curve's runs live, so that several processes or machines running "
            "the same command share the runs: a journal file (default: runs/curve.journal in --output-dir) or a "
            "database URL (postgresql://user:password@host/db).",
            "metavar": "URL",
        },
    )
    study: str | None = field(
        default=None,
        metadata={"help": "The name the curve's studies start with (default: the --output-dir folder's name)."},
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        self.size_list()

    def size_list(self) -> list[int]:
        """`--sizes` as sorted, distinct integers of at least 2."""
        try:
            sizes = sorted({int(part) for part in self.sizes.split(",") if part.strip()})
        except ValueError:
            raise ValueError(
                f"--sizes must be comma-separated whole numbers such as 500,2000,8000; got {self.sizes!r}."
            ) from None
        if not sizes or sizes[0] < 2:
            raise ValueError(f"--sizes needs at least one size, each at least 2 examples; got {self.sizes!r}.")
        return sizes
