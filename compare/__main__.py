"""`python -m compare run|report|predict|curve|bench ...`: one `core.cli.Command` per subcommand (`compare.commands`).

`python -m compare --help` lists the subcommands; `python -m compare COMMAND --help` shows a command's options.
"""

from __future__ import annotations

import argparse
import sys

from compare.commands import COMMANDS
from core.cli import EXIT_REFUSED
from core.console import print_error
from core.parsing import HelpFormatter


def parser() -> argparse.ArgumentParser:
    """What `python -m compare --help` shows: the subcommands and what each does."""
    found = argparse.ArgumentParser(
        prog="python -m compare",
        usage="%(prog)s COMMAND [options]",
        description="Scores trained runs, compares them, and writes reports, curves and benchmarks.",
        epilog="python -m compare COMMAND --help shows a command's options.",
        formatter_class=HelpFormatter,
        allow_abbrev=False,
    )
    commands = found.add_argument_group("commands")  # listed for the help only: `main` dispatches on argv[0]
    for name, command in COMMANDS.items():
        commands.add_argument(name, help=command.description)
    return found


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] in (["-h"], ["--help"]):
        parser().print_help()
        return 0
    if not argv or argv[0] not in COMMANDS:
        parser().print_help(sys.stderr)
        given = f"unknown command {argv[0]!r}" if argv else "no command given"
        print_error(f"{given}; choose one of {', '.join(COMMANDS)}.")
        return EXIT_REFUSED
    return COMMANDS[argv[0]].main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
