"""Ending a command on Ctrl-C (SIGINT) or SIGTERM with one line instead of a traceback.

Inside `interruptible()` both signals raise `Interrupted`, a `KeyboardInterrupt` that remembers which signal it
was, so the `except Exception` blocks of the code it unwinds let it through, and `core.processes` passes it on to
the command's child processes. The entry point catches it, prints one line (what was kept and the command that
goes on from there; `core.cli`), and exits with the shell's status for the signal: 130 for SIGINT, 143 for SIGTERM.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import sys
import threading
from collections.abc import Iterator, Sequence

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """The command was asked to stop by `signal_number` (SIGINT or SIGTERM)."""

    def __init__(self, signal_number: int = signal.SIGINT) -> None:
        super().__init__(signal.Signals(signal_number).name)
        self.signal_number = signal_number

    @property
    def name(self) -> str:
        return signal.Signals(self.signal_number).name

    @property
    def exit_status(self) -> int:
        """What a shell reports for a command the signal ended: 128 + its number (130, 143)."""
        return 128 + self.signal_number


def _raise_interrupted(signal_number: int, frame: object) -> None:
    raise Interrupted(signal_number)


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()  # only it may set signal handlers


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """SIGINT and SIGTERM raise `Interrupted` inside the block; the previous handlers come back after it."""
    if not _in_main_thread():
        yield
        return
    previous = {number: signal.getsignal(number) for number in SIGNALS}
    for number in SIGNALS:
        signal.signal(number, _raise_interrupted)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


@contextlib.contextmanager
def signals_ignored() -> Iterator[None]:
    """SIGINT and SIGTERM ignored inside the block: a second Ctrl-C does not cut short what the first one began
    (stopping a child process, printing the closing line)."""
    if not _in_main_thread():
        yield
        return
    previous = {number: signal.signal(number, signal.SIG_IGN) for number in SIGNALS}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def signal_of(error: BaseException) -> int:
    """The signal an interruption came from: its own for `Interrupted`, SIGINT for a plain `KeyboardInterrupt`."""
    return getattr(error, "signal_number", signal.SIGINT)


def program() -> str:
    """How this process was started, as a person would type it again: `.venv/bin/python -m finetune`.

    The interpreter is shown relative to the working directory when it lies inside it.
    """
    python = sys.executable or "python"
    with contextlib.suppress(ValueError):
        relative = os.path.relpath(python)
        if not relative.startswith(".."):
            python = relative
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if spec is not None and spec.name:
        return f"{python} -m {spec.name.removesuffix('.__main__')}"
    return f"{python} {sys.argv[0]}" if sys.argv and sys.argv[0] else python


def resume_argv(argv: Sequence[str]) -> list[str]:
    """`argv` with `--resume` added and `--overwrite` (which would discard the unfinished run) taken out."""
    kept: list[str] = []
    skip_value = False
    for arg in argv:
        if skip_value:
            skip_value = False
            if arg.lower() in ("true", "false", "yes", "no", "1", "0"):
                continue
        name = arg.split("=", 1)[0].replace("_", "-")
        if name == "--overwrite":
            skip_value = "=" not in arg
            continue
        kept.append(arg)
    if not any(arg.split("=", 1)[0] == "--resume" for arg in kept):
        kept.append("--resume")
    return kept


def command_line(argv: Sequence[str]) -> str:
    """`program()` followed by `argv`, quoted for a POSIX shell."""
    return " ".join([program(), shlex.join(list(argv))]).strip()
