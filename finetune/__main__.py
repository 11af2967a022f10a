"""`python -m finetune <data options> --output-dir DIR [--model ...] [--max-steps N] ...`: one fine-tuning run.

`python -m finetune export RUN_DIR --output-dir DIR` writes a finished run's serving export instead
(`finetune.export`; docs/formats.md, "Serving export"). Both parse their options here, without TensorFlow, and
follow `core.cli`'s exit statuses: a refused option, data file, output directory or checkpoint is one `error:`
line and status 2.
"""

import sys

from core.args import DataArguments, ExportArguments, RunArguments
from core.cli import Command
from finetune.args import FinetuneArguments

TRAIN = Command(
    prog="python -m finetune",
    description="Fine-tunes a pretrained BERT to classify texts, into a run directory (--output-dir).",
    arguments=(DataArguments, RunArguments, FinetuneArguments),
    work="finetune.train:train",
    epilog="python -m finetune export RUN_DIR --output-dir DIR writes a finished run's serving export (see its --help).",
)
EXPORT = Command(
    prog="python -m finetune export",
    description="Writes a finished fine-tuning run's serving export: a SavedModel, its int8 TFLite variant and "
    "ONNX models, each taking raw strings.",
    arguments=(ExportArguments,),
    work="finetune.export:export_run",
)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["export"]:
        return EXPORT.main(argv[1:])
    return TRAIN.main(argv)


if __name__ == "__main__":
    sys.exit(main())
