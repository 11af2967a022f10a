"""`python -m finetune <data options> --output-dir DIR [--model ...] [--epochs N] ...`: one fine-tuning run.

`python -m finetune export RUN_DIR --output-dir DIR` writes a finished run's serving export instead
(`finetune.export`; docs/formats.md, "Serving export"). Bad data, options, output directories and checkpoints
end in one `error:` line and exit status 2 (`core.cli`).
"""

import sys

from core.cli import quiet_tensorflow, side_command
from finetune.args import FinetuneArguments

train = side_command(FinetuneArguments, "finetune.run")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["export"]:
        quiet_tensorflow("--verbose" in argv)  # finetune.export imports TensorFlow
        from finetune.export import main as export_main

        return export_main(argv[1:])
    return train(argv)


if __name__ == "__main__":
    sys.exit(main())
