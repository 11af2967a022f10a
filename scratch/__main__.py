"""`python -m scratch <data options> --output-dir DIR [--preset ...] [--epochs N] ...`: one from-scratch run.

A classification task trains the encoder classifier (`scratch.run`); a translation task (`--task pt_en`, or
own files with `--source-column`) trains the translator (`scratch.translation.train`). `python -m scratch export
RUN_DIR --output-dir DIR` writes a classification run's serving export (`scratch.export`). Bad data, options and
output directories end in one `error:` line and exit status 2 (`core.cli`).
"""

from __future__ import annotations

import sys

from core.cli import quiet_tensorflow, side_command
from core.pairs import PairDataArguments, is_translation
from scratch.args import ScratchArguments

classify = side_command(ScratchArguments, "scratch.run")


def translate(argv: list[str] | None = None) -> int:
    """`python -m scratch` on a translation task: the translator's options, then `scratch.translation.train`."""
    argv = sys.argv[1:] if argv is None else list(argv)
    quiet_tensorflow("--verbose" in argv)  # the translator's options module imports TensorFlow
    from scratch.translation.args import TranslationArguments

    return side_command(TranslationArguments, "scratch.translation.train", PairDataArguments)(argv)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["export"]:
        quiet_tensorflow("--verbose" in argv)  # scratch.export imports TensorFlow
        from scratch.export import main as export_main

        return export_main(argv[1:])
    return translate(argv) if is_translation(argv) else classify(argv)


if __name__ == "__main__":
    sys.exit(main())
