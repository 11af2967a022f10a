"""`python -m compare run|report|predict|curve|bench ... [--verbose]`: one module per subcommand, each with `main(argv)`.

`--verbose` (anywhere on the line) lets TensorFlow's start-up notices through (`core.cli.quiet_tensorflow`).
Ctrl-C or SIGTERM stops the command and the sides it is training with one line (`core.cli.run_interruptible`).
"""

from __future__ import annotations

import importlib
import sys

from core.cli import quiet_tensorflow, run_interruptible

COMMANDS = {
    "run": "compare.run.command",
    "report": "compare.report.command",
    "predict": "compare.predict",
    "curve": "compare.curve.command",
    "bench": "compare.bench.command",
}

# What an interrupted subcommand leaves that running it again uses (the others publish nothing unfinished).
RUNS_KEPT = "the runs that had finished are kept, and the same command reuses them"
KEPT = {"run": RUNS_KEPT, "curve": RUNS_KEPT, "bench": RUNS_KEPT}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    verbose = "--verbose" in argv
    argv = [arg for arg in argv if arg != "--verbose"]
    if not argv or argv[0] not in COMMANDS:
        print(f"usage: python -m compare {{{','.join(COMMANDS)}}} [options] [--verbose]   (add --help to a command)")
        return 2
    quiet_tensorflow(verbose)
    module = importlib.import_module(COMMANDS[argv[0]])
    kept = KEPT.get(argv[0], "nothing unfinished was kept")
    return run_interruptible(lambda: module.main(argv[1:]), argv, kept)


if __name__ == "__main__":
    sys.exit(main())
