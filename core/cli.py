"""Every command line: one parser for all commands and one exit-status rule (what they print: `core.console`).

The commands (`python -m finetune [export]`, `python -m scratch [export]`, `python -m compare run|report|predict|
curve|bench`, `python app.py`) are each a `Command`: a `prog`, the argument dataclasses of its options, and the
function that does its work, imported only once the command line is accepted, so that `--help` and a refused
option answer without loading TensorFlow. How a command line is parsed, options files included: `core.parsing`.

Exit statuses, the same for every command:

    0  it did what was asked (and `--help`);
    1  a run or comparison failed while working, after its input was accepted (a side's training command
       failed, a run could not be scored): `error: <what failed>` as the last line on stderr;
    2  the command line or its input was refused before any work started: an unknown, mistyped or abbreviated
       option, a bad value, an option of the other kind of task, a missing or unreadable data file, an unknown
       task, a refused output directory or checkpoint. One `error: <message>` line on stderr names the option,
       file or value and says what to do; nothing is left behind.

A `core.errors.UserError` gives status 2 and a `core.errors.WorkFailed` status 1 (`run_command`); any other
exception is a bug and keeps its traceback.

Ctrl-C (SIGINT) and SIGTERM end a command with one line saying what was kept and the command that resumes it or
runs it again, and exit status 130 or 143 (`core.interrupts`).
"""

from __future__ import annotations

import contextlib
import importlib
import signal
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from core.console import print_error, print_line, quiet_tensorflow, setup_logging
from core.errors import UserError, WorkFailed
from core.interrupts import command_line, interruptible, resume_argv, signal_of, signals_ignored
from core.parsing import CommandParser, TaskKindParser
from core.rundir import UnfinishedRun, kept_so_far, partial_path
from core.task_kinds import TaskKind

EXIT_OK, EXIT_FAILED, EXIT_REFUSED = 0, 1, 2


Work = str | Callable[..., Any]  # "module:function", imported when called, or the function itself


@dataclass(frozen=True)
class Command:
    """A command a user runs.

    Attributes:
        prog: how it is called, `python -m finetune`.
        description: what it does, the first lines of its `--help`.
        arguments: the dataclasses of its options; or, for a command taking both kinds of task, one tuple per
            task, {CLASSIFICATION: ..., TRANSLATION: ...} (`core.task_kinds`, `TaskKindParser`).
        work: what it calls with the parsed dataclasses (per kind, when `arguments` is per kind). It raises a
            `UserError` for input it refuses before working, a `WorkFailed` for a failure while working.
        epilog: what its `--help` says after the options.
        logging: sets up logging, given whether `--verbose` was asked for.
        kept: for a command that is not a training run, what an interruption leaves that running it again uses (or a
            function of the parsed options that says it).
    """

    prog: str | None  # None: how this process was started (`default_prog`)
    description: str
    arguments: tuple[type, ...] | dict[TaskKind, tuple[type, ...]]
    work: Work | dict[TaskKind, Work]
    epilog: str | None = None
    logging: Callable[[bool], None] | None = None
    kept: str | Callable[[tuple], str] | None = None  # what an interrupted command that is not a training run
    # leaves for its next run

    def subcommand(self) -> list[str]:
        """The words of `prog` after `python -m <package>`: `["export"]` for `python -m finetune export`."""
        words = (self.prog or "").split()
        return words[3:] if words[:2] == ["python", "-m"] else []

    def parser(self) -> CommandParser:
        if isinstance(self.arguments, dict):
            return TaskKindParser(self.arguments, self.prog, self.description, self.epilog)
        return CommandParser(self.arguments, self.prog, self.description, self.epilog)

    def parse(self, argv: list[str] | None = None) -> tuple[TaskKind | None, tuple[Any, ...]]:
        """(the kind of task, or None for a command of one kind; the parsed dataclasses)."""
        argv = sys.argv[1:] if argv is None else list(argv)
        parser = self.parser()
        if isinstance(parser, TaskKindParser):
            return parser.parse_kind(argv)
        return None, parser.parse(argv)

    def work_for(self, kind: TaskKind | None) -> Callable[..., Any]:
        work = self.work[kind] if isinstance(self.work, dict) else self.work
        if callable(work):
            return work
        module, _, name = work.partition(":")
        return getattr(importlib.import_module(module), name)

    def main(self, argv: list[str] | None = None) -> int:
        return run_command(self, argv)


def run_command(command: Command, argv: list[str] | None = None) -> int:
    """Runs `command` on `argv`: parses it, sets up logging and keeps TensorFlow quiet unless `--verbose`, then
    does the work.

    Returns:
        0 when the work is done; 1 after printing `error: <message>` when it failed while working (`WorkFailed`).
    Raises:
        SystemExit: status 2 after printing `error: <message>` for a `UserError`: a refused command line, or input
            the work refused before starting (a refused unfinished run names the command that resumes it); 130
            (SIGINT) or 143 (SIGTERM) after one line that says what was kept and how to go on (`interrupted_line`).
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    again = [*command.subcommand(), *argv]  # the words after `python -m <package>` that run it again
    parsed: tuple[Any, ...] = ()
    with interruptible():
        try:
            kind, parsed = command.parse(argv)
            verbose = any(getattr(options, "verbose", False) for options in parsed)
            (command.logging or setup_logging)(verbose)
            quiet_tensorflow(verbose)
            command.work_for(kind)(*parsed)
        except UnfinishedRun as error:
            print_error(error.message(command_line(resume_argv(again))))
            raise SystemExit(EXIT_REFUSED) from None
        except UserError as error:
            print_error(error)
            raise SystemExit(EXIT_REFUSED) from None
        except WorkFailed as error:
            print_error(error)
            return EXIT_FAILED
        except KeyboardInterrupt as interrupted:
            with signals_ignored():
                print_line(interrupted_line(signal_of(interrupted), again, parsed, command.kept))
            raise SystemExit(128 + signal_of(interrupted)) from None
    return EXIT_OK


@contextlib.contextmanager
def working() -> Iterator[None]:
    """Marks where a command's checks end and its work begins: a `UserError` raised inside (a run that cannot be
    read after training, say) is a failure while working, exit status 1, not a refusal."""
    try:
        yield
    except UserError as error:
        raise WorkFailed(str(error)) from error


def interrupted_line(
    signal_number: int, argv: list[str], parsed: tuple[Any, ...], kept: str | Callable[[tuple], str] | None = None
) -> str:
    """The one line a command ends with when a signal stops it: for a training run, what its unfinished run kept and
    the command that resumes it (the same command line with `--resume`, without `--overwrite`); for another
    command, `kept` (what it leaves that running it again uses) and the command to run again."""
    name = signal.Signals(signal_number).name
    run = next((options for options in parsed if hasattr(options, "output_dir") and hasattr(options, "resume")), None)
    partial = partial_path(run.output_dir) if run is not None else None
    if partial is not None and partial.is_dir():
        return (
            f"interrupted ({name}): the unfinished run is kept in {partial} ({kept_so_far(partial)}); "
            f"resume it with: {command_line(resume_argv(argv))}"
        )
    if callable(kept):
        kept = kept(parsed)
    if kept is not None:
        return f"interrupted ({name}): {kept}; run the command again: {command_line(argv)}"
    return f"interrupted ({name}) before anything was kept; run the command again: {command_line(argv)}"
