"""One log line per stage with the time since the command started."""

from __future__ import annotations

import logging
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
