"""One log line per stage with the time since the command started, and a heartbeat while a side trains."""

from __future__ import annotations

import logging
import re
import threading
import time

logger = logging.getLogger("compare")


def setup_logging() -> None:
    """Plain timestamped lines on stderr; configured once, by each command's entry point."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    for ours in ("compare", "core"):
        logging.getLogger(ours).setLevel(logging.INFO)
    for noisy in ("absl", "tensorflow", "datasets", "evaluate", "h5py", "matplotlib", "transformers"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


class Progress:
    """`stage("scored finetune")` logs `[  12.3s] scored finetune`."""

    def __init__(self) -> None:
        self.start = time.perf_counter()

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def stage(self, message: str, *args: object) -> None:
        logger.info("[%7.1fs] " + message, self.elapsed, *args)


# A side's log line, as `core.console.setup_logging` writes it: date, time with milliseconds, level, logger, message.
LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ (?:INFO|WARNING) [\w.]+: (?P<message>.+)$")


class Heartbeat:
    """While a side's command runs, at least one line every `interval` seconds on compare's terminal: the side's
    latest progress line (step and budget, the latest validation score, the time left; or what it is doing, such as
    an ONNX conversion), and how long it has run. Its whole output still goes to its log only.

    Use as a context manager around the command, feeding it each output line (`core.processes.run_command`'s
    `on_line`).
    """

    def __init__(self, name: str, interval: float = 30.0) -> None:
        self.name, self.interval = name, interval
        self.latest = "starting"
        self.start = time.perf_counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, daemon=True)

    def on_line(self, line: str) -> None:
        found = LOG_LINE.match(line)
        if found:
            self.latest = found["message"]

    def _beat(self) -> None:
        while not self._stop.wait(self.interval):
            logger.info("  %s, %s in: %s", self.name, duration(time.perf_counter() - self.start), self.latest)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def duration(seconds: float) -> str:
    """Seconds in words: under a minute in seconds, under an hour in minutes and seconds, else hours and minutes.

    >>> duration(45), duration(185), duration(3720)
    ('45 s', '3 min 05 s', '1 h 02 min')
    """
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
