"""What `scratch.train` trains with when `--teacher` is given: the transfer set's inputs, packed targets, the loss.

`Distillation.check` refuses a bad teacher before the run directory exists; `label` then builds (or, on
`--resume`, reads) the transfer set inside the unfinished run; `record` is run.json's `distillation`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.data import TaskData
from core.errors import UserError
from core.record import RunRecord
from scratch.args import DISTILLATION_DEFAULTS, ScratchArguments
from scratch.distill.loss import DistillationLoss, gold_metrics, pack_targets
from scratch.distill.teacher import check_teacher
from scratch.distill.transfer import TRANSFER_FILE, TransferSet, transfer_set


@dataclass
class Distillation:
    teacher_dir: Path
    teacher_run: RunRecord
    data: TaskData
    args: ScratchArguments
    transfer: TransferSet | None = None

    @classmethod
    def check(cls, args: ScratchArguments, data: TaskData) -> Distillation:
        """Reads and checks `--teacher` against `data` (raises `RunError` naming what differs), and the options
        against its kind."""
        if data.kind.gives_values and args.temperature != DISTILLATION_DEFAULTS["temperature"]:
            raise UserError(
                f"--temperature {args.temperature:g} softens class probabilities; a regression teacher's values are "
                "learnt by squared error, at no temperature. Leave --temperature out."
            )
        teacher_dir = Path(args.teacher).resolve()
        return cls(teacher_dir, check_teacher(teacher_dir, data), data, args)

    def label(self, run_dir: Path, seed: int) -> None:
        """Builds or reads the transfer set in the unfinished run directory `run_dir`."""
        self.transfer = transfer_set(run_dir, self.teacher_dir, self.teacher_run, self.data, self.args.augment, seed)

    @property
    def texts(self) -> list[str]:
        return self.transfer.texts

    @property
    def text_pairs(self) -> list[str] | None:
        return self.transfer.text_pairs

    def train_targets(self) -> np.ndarray:
        """The transfer set's packed targets (n, 2D + 1): the train split's gold targets, the teacher's, real."""
        return pack_targets(self.data.targets("train"), self.transfer.teacher)

    def compiled(self) -> dict[str, Any]:
        """`scratch.train.compile_classifier`'s `loss` and `metrics`."""
        kind, width = self.data.kind, self.data.num_outputs
        args = self.args
        return {
            "loss": DistillationLoss(kind, width, args.distill_weight, args.temperature, args.label_smoothing),
            "metrics": gold_metrics(kind, width),
        }

    def record(self) -> dict[str, Any]:
        """run.json `distillation` (docs/formats.md)."""
        headline = self.data.headline
        return {
            "teacher": str(self.teacher_dir),
            "teacher_side": self.teacher_run.side,
            "teacher_created": self.teacher_run.created,
            "teacher_fingerprints": dict(self.teacher_run.data.fingerprints),
            "teacher_validation": {headline: self.teacher_run.validation[headline]},
            "weight": self.args.distill_weight,
            "temperature": self.args.temperature,
            "augment": self.args.augment,
            "soft_targets": self.transfer.key.get("soft_targets"),
            "transfer_file": TRANSFER_FILE,
            "transfer_rows": len(self.transfer.texts),
            "augmented_rows": self.transfer.augmented,
            "seconds": None if self.transfer.seconds is None else round(self.transfer.seconds, 3),
        }
