"""What a command prints: its log lines, its one-line errors, and neither TensorFlow's nor the other libraries'
notices unless `--verbose`."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


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


def quiet_library_import() -> None:
    """For the suite used as a library (`core.classifier.load`, `core.translator.load`): TensorFlow imported with
    its start-up notices kept off stderr, unless the user's environment asks for them (`TF_CPP_MIN_LOG_LEVEL` set)
    or something imported it already."""
    if "tensorflow" not in sys.modules and "TF_CPP_MIN_LOG_LEVEL" not in os.environ:
        quiet_tensorflow()


def notices_shown() -> bool:
    """Whether `quiet_tensorflow` let the libraries' notices through (`--verbose`), in this process and its children."""
    return os.environ.get("TF_CPP_MIN_LOG_LEVEL") == "0"


@contextlib.contextmanager
def library_logs_quiet() -> Iterator[None]:
    """Raises the root logger to ERROR for the block unless `notices_shown()`: for libraries that log their progress
    and advice on the root logger (onnxruntime's quantizer), which the suite's logging would print."""
    root = logging.getLogger()
    level = root.level
    if not notices_shown():
        root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        root.setLevel(level)


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
