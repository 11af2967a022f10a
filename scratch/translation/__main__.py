"""`python -m scratch.translation <pair data options> --output-dir DIR [...]`: trains a translation model.

The same command as `python -m scratch --task pt_en ...`, through `core.cli` (one `error:` line, exit 2).
"""

import sys

from scratch.__main__ import translate

if __name__ == "__main__":
    sys.exit(translate())
