"""The transfer set of a distilled run: the train texts and their augmented copies, with the teacher's logits.

It is built once, when the run starts, and kept in the run directory as `transfer_set.npz`, so `--resume`
continues on the same set without asking the teacher again (unless the teacher, the seed, the data or `--augment`
changed). The file holds `texts` (the transfer set's texts, as UTF-8 JSON bytes), `gold` (label id of a real
row, -1 for an augmented one), `logits` (n, K), `validation_logits` (the teacher on the validation split, for
the validation loss), `key` (what it was built from, as JSON) and `seconds` (how long building it took, so a
resumed run still reports its teacher's time).
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.classifier import Classifier, load
from core.data import TaskData
from scratch.distill.augment import augment
from scratch.distill.teacher import teacher_logits

logger = logging.getLogger(__name__)

TRANSFER_FILE = "transfer_set.npz"


@dataclass
class TransferSet:
    """Texts (real rows first, then the augmented copies), gold ids (-1 when augmented) and teacher logits."""

    texts: list[str]
    gold: np.ndarray  # (n,) int64
    logits: np.ndarray  # (n, K) float32
    validation_logits: np.ndarray  # (n_validation, K) float32
    key: dict[str, Any]
    seconds: float | None = None  # the teacher's time to build the set (augmenting and labelling)

    @property
    def augmented(self) -> int:
        return int((self.gold < 0).sum())

    def save(self, path: Path) -> None:
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez(
            tmp,
            texts=np.frombuffer(json.dumps(self.texts, ensure_ascii=False).encode("utf-8"), np.uint8),
            gold=self.gold,
            logits=self.logits,
            validation_logits=self.validation_logits,
            key=np.frombuffer(json.dumps(self.key, sort_keys=True).encode("utf-8"), np.uint8),
            seconds=np.float64(np.nan if self.seconds is None else self.seconds),
        )
        os.replace(tmp, path)

    @classmethod
    def read(cls, path: Path) -> TransferSet | None:
        """The set saved in `path`, or None when there is none or it cannot be read."""
        if not path.is_file():
            return None
        try:
            with np.load(path) as saved:
                return cls(
                    texts=json.loads(saved["texts"].tobytes().decode("utf-8")),
                    gold=saved["gold"],
                    logits=saved["logits"],
                    validation_logits=saved["validation_logits"],
                    key=json.loads(saved["key"].tobytes().decode("utf-8")),
                    seconds=_seconds(saved),
                )
        except (OSError, ValueError, KeyError):
            return None


def _seconds(saved: Any) -> float | None:
    seconds = float(saved["seconds"]) if "seconds" in saved.files else float("nan")
    return None if np.isnan(seconds) else seconds


def transfer_key(teacher_dir: Path, teacher_run: dict, data: TaskData, copies: int, seed: int) -> dict[str, Any]:
    """What a transfer set depends on: the teacher (path and when it was written), the data, `--augment`, the seed."""
    return {
        "teacher": str(teacher_dir),
        "teacher_created": teacher_run.get("created"),
        "fingerprints": dict(data.fingerprints),
        "augment": copies,
        "seed": seed,
    }


def build_transfer_set(teacher: Classifier, data: TaskData, copies: int, seed: int, key: dict[str, Any]) -> TransferSet:
    """Augments the train texts and has the teacher label them all."""
    start = time.perf_counter()
    real = data.texts("train")
    texts = real + augment(real, copies, seed)
    gold = np.concatenate([data.label_ids("train"), np.full(len(texts) - len(real), -1, np.int64)])
    logits = teacher_logits(teacher, texts)
    validation_logits = teacher_logits(teacher, data.texts("validation"))
    seconds = time.perf_counter() - start
    logger.info("Teacher labelled %d texts (%d augmented) in %.0f s", len(texts), len(texts) - len(real), seconds)
    return TransferSet(texts, gold, logits, validation_logits, {**key, "logits": "log_probabilities"}, seconds)


def transfer_set(
    run_dir: Path,
    teacher_dir: Path,
    teacher_run: dict,
    data: TaskData,
    copies: int,
    seed: int,
    loader: Callable[[Path], Classifier] = load,
) -> TransferSet:
    """The run's transfer set: read from `run_dir/transfer_set.npz` when built from the same key, else built
    (the teacher loaded through `loader`) and saved there."""
    key = transfer_key(teacher_dir, teacher_run, data, copies, seed)
    path = Path(run_dir) / TRANSFER_FILE
    cached = TransferSet.read(path)
    if cached is not None and {k: v for k, v in cached.key.items() if k != "logits"} == key:
        logger.info("Reusing the transfer set in %s (%d texts)", path, len(cached.texts))
        return cached
    teacher = loader(teacher_dir)
    built = build_transfer_set(teacher, data, copies, seed, key)
    del teacher
    built.save(path)
    return built
