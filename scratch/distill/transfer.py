"""The transfer set of a distilled run: the train inputs and their augmented copies, with the teacher's soft
targets.

It is built once, when the run starts, and kept in the run directory as `transfer_set.npz`, so `--resume`
continues on the same set without asking the teacher again (unless the teacher, the seed, the data or `--augment`
changed). The file holds `texts` and `text_pairs` (the transfer set's texts and, for a pair task, their second
texts, null otherwise; UTF-8 JSON bytes), `real_rows` (how many of the first rows are the train split's own, whose
gold targets are the split's), `teacher` (the teacher's soft targets, (n, D)), `key` (what it was built from, as
JSON) and `seconds` (how long building it took, so a resumed run still reports its teacher's time).
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
from core.record import RunRecord
from scratch.distill.augment import augment
from scratch.distill.kinds import distilled
from scratch.distill.teacher import teacher_targets

logger = logging.getLogger(__name__)

TRANSFER_FILE = "transfer_set.npz"


@dataclass
class TransferSet:
    """Inputs (the train split's first, then the augmented copies) and the teacher's soft targets of each."""

    texts: list[str]
    text_pairs: list[str] | None  # a pair task's second texts
    real_rows: int  # the first rows, the train split's own
    teacher: np.ndarray  # (n, D) float32
    key: dict[str, Any]
    seconds: float | None = None  # the teacher's time to build the set (augmenting and labelling)

    @property
    def augmented(self) -> int:
        return len(self.texts) - self.real_rows

    def save(self, path: Path) -> None:
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez(
            tmp,
            texts=_json_bytes(self.texts),
            text_pairs=_json_bytes(self.text_pairs),
            real_rows=np.int64(self.real_rows),
            teacher=self.teacher,
            key=_json_bytes(self.key),
            seconds=np.float64(np.nan if self.seconds is None else self.seconds),
        )
        os.replace(tmp, path)

    @classmethod
    def read(cls, path: Path) -> TransferSet | None:
        """The set saved in `path`, or None when there is none or it cannot be read (or is of an earlier version)."""
        if not path.is_file():
            return None
        try:
            with np.load(path) as saved:
                seconds = float(saved["seconds"])
                return cls(
                    texts=_from_json(saved["texts"]),
                    text_pairs=_from_json(saved["text_pairs"]),
                    real_rows=int(saved["real_rows"]),
                    teacher=saved["teacher"],
                    key=_from_json(saved["key"]),
                    seconds=None if np.isnan(seconds) else seconds,
                )
        except (OSError, ValueError, KeyError):
            return None


def _json_bytes(value: Any) -> np.ndarray:
    return np.frombuffer(json.dumps(value, ensure_ascii=False, sort_keys=True).encode("utf-8"), np.uint8)


def _from_json(saved: np.ndarray) -> Any:
    return json.loads(saved.tobytes().decode("utf-8"))


def transfer_key(teacher_dir: Path, teacher_run: RunRecord, data: TaskData, copies: int, seed: int) -> dict[str, Any]:
    """What a transfer set depends on: the teacher (path and when it was written), the data, `--augment`, the seed."""
    return {
        "teacher": str(teacher_dir),
        "teacher_created": teacher_run.created,
        "fingerprints": dict(data.fingerprints),
        "augment": copies,
        "seed": seed,
    }


def build_transfer_set(teacher: Classifier, data: TaskData, copies: int, seed: int, key: dict[str, Any]) -> TransferSet:
    """Augments the train inputs (each text of a pair on its own) and has the teacher label them all."""
    start = time.perf_counter()
    real, real_pairs = data.texts("train"), data.text_pairs("train")
    texts = real + augment(real, copies, seed)
    text_pairs = None if real_pairs is None else real_pairs + augment(real_pairs, copies, seed + 1)
    soft = teacher_targets(teacher, texts, text_pairs)
    seconds = time.perf_counter() - start
    logger.info("Teacher labelled %d inputs (%d augmented) in %.0f s", len(texts), len(texts) - len(real), seconds)
    return TransferSet(
        texts, text_pairs, len(real), soft, {**key, "soft_targets": distilled(data.kind).soft_targets_name}, seconds
    )


def transfer_set(
    run_dir: Path,
    teacher_dir: Path,
    teacher_run: RunRecord,
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
    if cached is not None and {k: v for k, v in cached.key.items() if k != "soft_targets"} == key:
        logger.info("Reusing the transfer set in %s (%d inputs)", path, len(cached.texts))
        return cached
    teacher = loader(teacher_dir)
    built = build_transfer_set(teacher, data, copies, seed, key)
    del teacher
    built.save(path)
    return built
