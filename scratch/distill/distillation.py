"""What `scratch.run` trains with when `--teacher` is given: the transfer set's texts, packed targets, the loss.

`Distillation.check` refuses a bad teacher before the run directory exists; `label` then builds (or, on
`--resume`, reads) the transfer set inside the unfinished run; `record` is run.json's `distillation`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.data import TaskData
from scratch.args import ScratchArguments
from scratch.distill.loss import DistillationLoss, GoldAccuracy, pack_targets
from scratch.distill.teacher import check_teacher
from scratch.distill.transfer import TRANSFER_FILE, TransferSet, transfer_set


@dataclass
class Distillation:
    teacher_dir: Path
    teacher_run: dict[str, Any]
    data: TaskData
    args: ScratchArguments
    transfer: TransferSet | None = None

    @classmethod
    def check(cls, args: ScratchArguments, data: TaskData) -> Distillation:
        """Reads and checks `--teacher` against `data` (raises `RunError` naming what differs)."""
        teacher_dir = Path(args.teacher).resolve()
        return cls(teacher_dir, check_teacher(teacher_dir, data), data, args)

    def label(self, run_dir: Path, seed: int) -> None:
        """Builds or reads the transfer set in the unfinished run directory `run_dir`."""
        self.transfer = transfer_set(run_dir, self.teacher_dir, self.teacher_run, self.data, self.args.augment, seed)

    @property
    def texts(self) -> list[str]:
        return self.transfer.texts

    def train_targets(self) -> np.ndarray:
        return pack_targets(self.transfer.gold, self.transfer.logits)  # (n, 2K + 1)

    def validation_targets(self) -> np.ndarray:
        return pack_targets(self.data.label_ids("validation"), self.transfer.validation_logits)

    def loss(self) -> DistillationLoss:
        return DistillationLoss(
            len(self.data.labels), self.args.distill_weight, self.args.temperature, self.args.label_smoothing
        )

    def metric(self) -> GoldAccuracy:
        return GoldAccuracy(len(self.data.labels))

    def record(self) -> dict[str, Any]:
        """run.json `distillation` (docs/formats.md)."""
        return {
            "teacher": str(self.teacher_dir),
            "teacher_side": self.teacher_run["side"],
            "teacher_created": self.teacher_run.get("created"),
            "teacher_fingerprints": dict(self.teacher_run["data"]["fingerprints"]),
            "teacher_validation_accuracy": self.teacher_run["validation"]["accuracy"],
            "weight": self.args.distill_weight,
            "temperature": self.args.temperature,
            "augment": self.args.augment,
            "soft_targets": self.transfer.key.get("logits"),
            "transfer_file": TRANSFER_FILE,
            "transfer_rows": len(self.transfer.texts),
            "augmented_rows": self.transfer.augmented,
            "seconds": None if self.transfer.seconds is None else round(self.transfer.seconds, 3),
        }
