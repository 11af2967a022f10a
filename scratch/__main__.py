"""`python -m scratch <data options> --output-dir DIR [--preset ...] [--max-steps N] ...`: one from-scratch run.

One program for both kinds of task: a classification task trains the encoder classifier (`scratch.train`); a
translation task (`--task pt_en`, or own files with `--source-column`) trains the translator
(`scratch.translation.train`). Its `--help` lists both kinds' options, and an option of the other kind is
refused by name (`core.parsing.TaskKindParser`). `python -m scratch export RUN_DIR --output-dir DIR` writes a
classification run's serving export (`scratch.export`). Exit statuses: `core.cli`.
"""

from __future__ import annotations

import sys

from core.args import DataArguments, ExportArguments, PairDataArguments, RunArguments
from core.cli import Command
from core.task_kinds import CLASSIFICATION, TRANSLATION
from scratch.args import ScratchArguments
from scratch.pretraining import PretrainingArguments
from scratch.translation.args import TranslationArguments

TRAIN = Command(
    prog="python -m scratch",
    description="Trains a Transformer from scratch into a run directory (--output-dir): a text classifier, or "
    "with a translation task a translator.",
    arguments={
        CLASSIFICATION: (DataArguments, RunArguments, ScratchArguments, PretrainingArguments),
        TRANSLATION: (PairDataArguments, RunArguments, TranslationArguments),
    },
    work={CLASSIFICATION: "scratch.train:train", TRANSLATION: "scratch.translation.train:train"},
    epilog="python -m scratch export RUN_DIR --output-dir DIR writes a finished classification run's serving "
    "export (see its --help).",
)
EXPORT = Command(
    prog="python -m scratch export",
    description="Writes a finished from-scratch classification run's serving export: a SavedModel taking raw "
    "strings (a translation run's saved_model/ already is one).",
    arguments=(ExportArguments,),
    work="scratch.export:export_run",
)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["export"]:
        return EXPORT.main(argv[1:])
    return TRAIN.main(argv)


if __name__ == "__main__":
    sys.exit(main())
