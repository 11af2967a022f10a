"""What every training command shares: option parsing, quiet TensorFlow start-up, and one-line errors.

`python -m finetune` and `python -m scratch` both run through `side_command` and `run_command`: it parses the command line
into the side's dataclasses, configures logging, keeps TensorFlow's start-up notices out of the terminal
unless `--verbose`, calls the side's `train`, and turns a `UserError` (bad data, bad options, a refused
output directory, a bad checkpoint) into one `error: <message>` line on stderr and exit status 2. Ctrl-C (SIGINT)
and SIGTERM end it with one line saying what was kept and the command that resumes it, and exit status 130 or
143 (`core.interrupts`).
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import signal
import sys
from collections.abc import Callable, Iterator
from typing import Any

from core.args import DataArguments, RunArguments, parse_args
from core.errors import UserError
from core.interrupts import command_line, interruptible, resume_argv, signal_of, signals_ignored
from core.rundir import UnfinishedRun, kept_so_far, partial_path

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
EXIT_USER_ERROR = 2


def side_command(
    arguments: type, run_module: str, data_arguments: type = DataArguments
) -> Callable[[list[str] | None], int]:
    """The `main` of `python -m <side>`: data, run and `arguments` options, then `run_module`'s `train`.

    `run_module` imports TensorFlow, so it is imported only once the command line has set how verbose
    TensorFlow may be.
    """

    def train(*parsed: Any) -> Any:
        return importlib.import_module(run_module).train(*parsed)

    def main(argv: list[str] | None = None) -> int:
        return run_command(argv, (data_arguments, RunArguments, arguments), train)

    return main


def run_command(argv: list[str] | None, dataclass_types: tuple[type, ...], train: Callable[..., Any]) -> int:
    """Parses `argv` into `dataclass_types`, then calls `train(*parsed)`; returns 0 when it finishes.

    Raises:
        SystemExit: status 2 after printing `error: <message>` for any `UserError`, options included (a refused
            unfinished run names the command that resumes it); 130 (SIGINT) or 143 (SIGTERM) after printing one
            line that says what was kept and how to go on (`interrupted_line`).
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    parsed: tuple[Any, ...] = ()
    with interruptible():
        try:
            parsed = parse_args(dataclass_types, argv, raise_errors=True)
            verbose = any(getattr(options, "verbose", False) for options in parsed)
            setup_logging(verbose)
            quiet_tensorflow(verbose)
            train(*parsed)
        except UnfinishedRun as error:
            print_error(error.message(command_line(resume_argv(argv))))
            raise SystemExit(EXIT_USER_ERROR) from None
        except UserError as error:
            print_error(error)
            raise SystemExit(EXIT_USER_ERROR) from None
        except KeyboardInterrupt as interrupted:
            with signals_ignored():
                print_line(interrupted_line(signal_of(interrupted), argv, parsed))
            raise SystemExit(128 + signal_of(interrupted)) from None
    return 0


def run_interruptible(call: Callable[[], int | None], argv: list[str], kept: str) -> int:
    """`call()`'s exit status; when SIGINT or SIGTERM stops it, one line saying `kept` (what remains) and the
    command to run again (`argv` after the program), then exit status 130 or 143. For commands that are not
    training runs (`python -m compare ...`); their child processes get the signal too (`core.processes`)."""
    with interruptible():
        try:
            return call() or 0
        except KeyboardInterrupt as interrupted:
            name = signal.Signals(signal_of(interrupted)).name
            with signals_ignored():
                print_line(f"interrupted ({name}): {kept}; run the command again: {command_line(argv)}")
            raise SystemExit(128 + signal_of(interrupted)) from None


def interrupted_line(signal_number: int, argv: list[str], parsed: tuple[Any, ...]) -> str:
    """The one line a training command ends with when a signal stops it: what was kept and the command that resumes
    it (the same command line with `--resume`, without `--overwrite`)."""
    name = signal.Signals(signal_number).name
    run = next((options for options in parsed if hasattr(options, "output_dir") and hasattr(options, "resume")), None)
    partial = partial_path(run.output_dir) if run is not None else None
    if partial is not None and partial.is_dir():
        return (
            f"interrupted ({name}): the unfinished run is kept in {partial} ({kept_so_far(partial)}); "
            f"resume it with: {command_line(resume_argv(argv))}"
        )
    return f"interrupted ({name}) before anything was kept; run the command again: {command_line(argv)}"


def print_error(error: BaseException | str) -> None:
    """The error as the single line `error: <message>` on stderr."""
    print_line(f"error: {error}")


def print_line(message: str) -> None:
    """`message` on stderr as one line, however many lines or spaces it was written with."""
    sys.stderr.write(" ".join(str(message).split()) + "\n")
    sys.stderr.flush()


def setup_logging(verbose: bool = False) -> None:
    """Timestamped INFO logs on stderr; the libraries' notices (datasets, transformers, TensorFlow) only if `verbose`."""
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT, stream=sys.stderr)
    if verbose:
        return
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")  # for the child processes
    from transformers.utils import logging as transformers_logging

    # transformers read the variable when they were imported (the options parser imports them): set it now.
    transformers_logging.set_verbosity_error()  # its TF classes' deprecation, "newly initialized" heads
    for name in ("datasets", "tensorflow", "absl", "h5py"):
        logging.getLogger(name).setLevel(logging.ERROR)


QUIET_TF_LOG_LEVEL = "3"  # TF_CPP_MIN_LOG_LEVEL without --verbose: TensorFlow's C++ logs at FATAL only


def quiet_tensorflow(verbose: bool = False) -> None:
    """Imports TensorFlow with its C++ notices kept off stderr unless `verbose`.

    `TF_CPP_MIN_LOG_LEVEL` is set to `QUIET_TF_LOG_LEVEL` before TensorFlow loads, for this process and the
    processes it starts: it hides the lines TensorFlow logs while it runs (an error-level `E0000 ... oneDNN
    supports DT_INT64` notice, grappler's `I0000` lines while a model is converted). The lines it prints while it
    loads (oneDNN, CUDA drivers, CPU features) come before that setting applies, so stderr is pointed at
    /dev/null for that moment only. With `verbose` everything is shown. Call it before anything imports
    TensorFlow (a later call only quiets the Python loggers); compare and the app may call it too.
    """
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "0" if verbose else QUIET_TF_LOG_LEVEL
    if verbose or "tensorflow" in sys.modules:
        import tensorflow  # noqa: F401
    else:
        with _stderr_silenced():
            import tensorflow as tf

            tf.config.list_physical_devices()  # the CUDA probe prints its notice here
    if not verbose:
        from absl import logging as absl_logging

        absl_logging.set_verbosity(absl_logging.ERROR)


def notices_shown() -> bool:
    """Whether `quiet_tensorflow` let the libraries' notices through (`--verbose`), in this process and its children."""
    return os.environ.get("TF_CPP_MIN_LOG_LEVEL") == "0"


@contextlib.contextmanager
def native_notices_silenced() -> Iterator[None]:
    """Points stderr at /dev/null for the block unless `notices_shown()`: for C++ code that logs at INFO whatever
    TensorFlow's level (the SentencePiece inside tensorflow-text)."""
    if notices_shown():
        yield
        return
    with _stderr_silenced():
        yield


@contextlib.contextmanager
def _stderr_silenced() -> Iterator[None]:
    """Points file descriptor 2 at /dev/null (what C++ writes to), restoring it afterwards."""
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)
