"""What every training command shares: option parsing, quiet TensorFlow start-up, and one-line errors.

`python -m finetune` and `python -m scratch` both run through `side_command` and `run_command`: it parses the command line
into the side's dataclasses, configures logging, keeps TensorFlow's start-up notices out of the terminal
unless `--verbose`, calls the side's `train`, and turns a `UserError` (bad data, bad options, a refused
output directory, a bad checkpoint) into one `error: <message>` line on stderr and exit status 2.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

from core.args import DataArguments, RunArguments, parse_args
from core.errors import UserError

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
        SystemExit: status 2 after printing `error: <message>` for any `UserError`, options included.
    """
    try:
        parsed = parse_args(dataclass_types, argv, raise_errors=True)
        verbose = any(getattr(options, "verbose", False) for options in parsed)
        setup_logging(verbose)
        quiet_tensorflow(verbose)
        train(*parsed)
    except UserError as error:
        print_error(error)
        raise SystemExit(EXIT_USER_ERROR) from None
    return 0


def print_error(error: BaseException) -> None:
    """The error as the single line `error: <message>` on stderr."""
    message = " ".join(str(error).split())
    sys.stderr.write(f"error: {message}\n")
    sys.stderr.flush()


def setup_logging(verbose: bool = False) -> None:
    """Timestamped INFO logs on stderr; the libraries' notices (datasets, transformers, TensorFlow) only if `verbose`."""
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT, stream=sys.stderr)
    if verbose:
        return
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")  # read when transformers first logs
    for name in ("datasets", "tensorflow", "absl", "h5py"):
        logging.getLogger(name).setLevel(logging.ERROR)


def quiet_tensorflow(verbose: bool = False) -> None:
    """Imports TensorFlow with its start-up notices (oneDNN, CUDA drivers, CPU features, absl) kept off stderr.

    TensorFlow 2.21 prints those notices from C++ while it loads and when it first looks for devices, and
    ignores a `TF_CPP_MIN_LOG_LEVEL` set from Python, so stderr is pointed at /dev/null for that moment only.
    With `verbose` everything is shown. Call it before anything imports TensorFlow (a later call only quiets
    the Python loggers); compare and the app may call it too.
    """
    if verbose:
        os.environ["TF_CPP_MIN_LOG_LEVEL"] = "0"
    if verbose or "tensorflow" in sys.modules:
        import tensorflow  # noqa: F401
    else:
        with _stderr_silenced():
            import tensorflow as tf

            tf.config.list_physical_devices()  # the CUDA probe prints its notice here
    if not verbose:
        from absl import logging as absl_logging

        absl_logging.set_verbosity(absl_logging.ERROR)


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
