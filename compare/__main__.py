"""`python -m compare run|report|predict|curve|bench ... [--verbose]`: one module per subcommand, each with `main(argv)`.

`--verbose` (anywhere on the line) lets TensorFlow's start-up notices through (see `compare/__init__.py`).
"""

from __future__ import annotations

import importlib
import sys

COMMANDS = {
    "run": "compare.run.command",
    "report": "compare.report.command",
    "predict": "compare.predict",
    "curve": "compare.curve.command",
    "bench": "compare.bench.command",
}


def main(argv: list[str] | None = None) -> int:
    argv = [arg for arg in (sys.argv[1:] if argv is None else argv) if arg != "--verbose"]
    if not argv or argv[0] not in COMMANDS:
        print(f"usage: python -m compare {{{','.join(COMMANDS)}}} [options] [--verbose]   (add --help to a command)")
        return 2
    module = importlib.import_module(COMMANDS[argv[0]])
    return module.main(argv[1:]) or 0


if __name__ == "__main__":
    sys.exit(main())
