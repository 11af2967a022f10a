"""Starting the suite's own commands (`python -m finetune ...`, measuring stages, the app) as subprocesses.

One helper for every place that starts a process: the child gets the suite's environment (Keras 2,
TensorFlow's start-up notices kept quiet unless the parent asked for them, this checkout importable), its
output goes to a log file or streams to the terminal, and a failure raises `ProcessError` whose message
carries the command's own `error:` line, or else the end of what it wrote, so the person reading it does
not have to open the log. An interruption (Ctrl-C, SIGTERM; `core.interrupts`) while a command runs is passed
on to it, and the caller goes on only once the command has ended.
"""

from __future__ import annotations

import collections
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

from core.console import QUIET_TF_LOG_LEVEL
from core.errors import WorkFailed
from core.interrupts import signal_of, signals_ignored

ROOT = Path(__file__).resolve().parents[1]
TAIL_LINES = 20
STOP_SECONDS = 60  # how long an interrupted command may take to end (saving what it keeps) before it is killed
ERROR_LINE = re.compile(r"(^|:\s)error:\s", re.IGNORECASE)  # `error: ...` and argparse's `prog: error: ...`


class ProcessError(WorkFailed):
    """A command exited with a non-zero code (a failure while working: exit status 1, `core.cli`).

    Attributes:
        command: the command as started.
        returncode: its exit code.
        detail: its last `error:` line, or the last lines of its output.
        log: the file holding its whole output, if any.
    """

    def __init__(self, command: Sequence[str], returncode: int, detail: str, log: Path | None = None) -> None:
        self.command, self.returncode, self.detail, self.log = list(command), returncode, detail, log
        shown = " ".join(["python", *command[1:]] if command and command[0] == sys.executable else command)
        where = f"; full output in {log}" if log else ""
        super().__init__(f"`{shown}` failed (exit {returncode}){where}:\n{detail}")


def child_environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment plus what the suite's commands need, and `extra`."""
    return {
        **os.environ,
        "TF_USE_LEGACY_KERAS": "1",
        "TF_CPP_MIN_LOG_LEVEL": os.environ.get("TF_CPP_MIN_LOG_LEVEL", QUIET_TF_LOG_LEVEL),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        **(extra or {}),
    }


def failure_detail(lines: Sequence[str]) -> str:
    """From the last line that says `error:` to the end (a message may span lines), else the last `TAIL_LINES`."""
    errors = [i for i, line in enumerate(lines) if ERROR_LINE.search(line)]
    start = errors[-1] if errors else 0
    return "\n".join(lines[start:][-TAIL_LINES:]).strip()


def run_command(
    cmd: Sequence[str],
    log: str | Path | None = None,
    capture_stdout: bool = False,
    env: dict[str, str] | None = None,
    cwd: str | Path | None = None,
    append: bool = False,
    on_line: Callable[[str], None] | None = None,
) -> str:
    """Runs `cmd` to completion in the suite's environment.

    Args:
        cmd: the command, e.g. `[sys.executable, "-m", "scratch", ...]`.
        log: a file that receives the command's output (stderr, and stdout unless captured); without one the
            output streams to this process's stderr; `os.devnull` keeps it only for a failure's message.
        capture_stdout: return the command's stdout instead of logging it (for commands that print a result).
        env: extra environment variables.
        cwd: the working directory (default: the checkout).
        append: add to `log` rather than replace it (a resumed run's log keeps what came before).
        on_line: called with each line of the command's output (stderr, and stdout unless captured), as it comes.
    Returns:
        the captured stdout, or "" when not captured.
    Raises:
        ProcessError: the command exited with a non-zero code.
        KeyboardInterrupt: this process was interrupted; the command got the same signal and has ended.
    """
    cmd = [str(part) for part in cmd]
    tail: collections.deque[str] = collections.deque(maxlen=1000)
    stdout: list[str] = []
    sink = Path(log).open("a" if append else "w", encoding="utf-8") if log else sys.stderr
    try:
        process = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if capture_stdout else subprocess.STDOUT,
            env=child_environment(env),
            cwd=cwd or ROOT,
            text=True,
            encoding="utf-8",
            errors="replace",
        )
        try:
            reader = None
            if capture_stdout:
                reader = threading.Thread(target=lambda: stdout.append(process.stdout.read()), daemon=True)
                reader.start()
            _copy_lines(process.stderr if capture_stdout else process.stdout, sink, tail, on_line)
            if reader is not None:
                reader.join()
            returncode = process.wait()
        except KeyboardInterrupt as interrupted:
            stop(process, signal_of(interrupted))
            with signals_ignored():  # the command's closing lines (what it kept) still go to its log
                _copy_lines(process.stderr if capture_stdout else process.stdout, sink, tail)
            raise
    finally:
        if log:
            sink.close()
    if returncode != 0:
        kept = Path(log) if log and str(log) != os.devnull else None
        raise ProcessError(cmd, returncode, failure_detail(list(tail)), kept)
    return "".join(stdout)


def start_command(cmd: Sequence[str], log: str | Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    """Starts a long-running command (a server) in the suite's environment, its output going to `log`.

    The caller stops it; `exit_error` says why it ended early.
    """
    with Path(log).open("w", encoding="utf-8") as handle:
        return subprocess.Popen(
            [str(part) for part in cmd], stdout=handle, stderr=subprocess.STDOUT, env=child_environment(env), cwd=ROOT
        )


def stop(process: subprocess.Popen, signal_number: int = signal.SIGTERM) -> None:
    """Sends `signal_number` to a started command and waits for it to end (killing it after `STOP_SECONDS`).

    A command started from a terminal got a Ctrl-C already; a second one is harmless to the suite's commands, which
    ignore further signals once the first has them ending.
    """
    with signals_ignored():
        if process.poll() is None:
            process.send_signal(signal_number)
        try:
            process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def exit_error(process: subprocess.Popen, log: str | Path) -> ProcessError:
    """The error for a started command that has exited: its exit code and its log's error line or end."""
    lines = Path(log).read_text(encoding="utf-8", errors="replace").splitlines()
    return ProcessError(process.args, process.returncode, failure_detail(lines), Path(log))


def _copy_lines(
    source: IO[str], sink: IO[str], tail: collections.deque[str], on_line: Callable[[str], None] | None = None
) -> None:
    for line in source:
        sink.write(line)
        sink.flush()
        tail.append(line.rstrip("\n"))
        if on_line is not None:
            on_line(line.rstrip("\n"))
