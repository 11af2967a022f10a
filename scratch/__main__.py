"""`python -m scratch <data options> --output-dir DIR [--preset ...] [--epochs N] ...`: one from-scratch run.

Bad data, options and output directories end in one `error:` line and exit status 2 (`core.cli`).
"""

import sys

from core.cli import side_command
from scratch.args import ScratchArguments

main = side_command(ScratchArguments, "scratch.run")

if __name__ == "__main__":
    sys.exit(main())
