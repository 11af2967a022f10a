"""`python -m finetune <data options> --output-dir DIR [--model ...] [--epochs N] ...`: one fine-tuning run.

Bad data, options, output directories and checkpoints end in one `error:` line and exit status 2 (`core.cli`).
"""

import sys

from core.cli import side_command
from finetune.args import FinetuneArguments

main = side_command(FinetuneArguments, "finetune.run")

if __name__ == "__main__":
    sys.exit(main())
