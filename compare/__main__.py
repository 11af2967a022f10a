"""`python -m compare run|report|predict|curve|bench ...`: one module per subcommand, each with `main(argv)`."""

from __future__ import annotations

import importlib
import sys

COMMANDS = {
    "run": "compare.run",
    "report": "compare.report",
    "predict": "compare.predict",
    "curve": "compare.curve",
    "bench": "compare.bench",
}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in COMMANDS:
        print(f"usage: python -m compare {{{','.join(COMMANDS)}}} [options]   (add --help to a command)")
        return 2
    module = importlib.import_module(COMMANDS[argv[0]])
    return module.main(argv[1:]) or 0


if __name__ == "__main__":
    sys.exit(main())
