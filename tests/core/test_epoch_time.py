from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.epoch_time import training_seconds


def test_training_seconds_counts_each_epoch_once_taking_its_last_record(tmp_path: Path) -> None:
    path = tmp_path / "epoch_seconds.jsonl"
    rows = [{"epoch": 1, "seconds": 10.0}, {"epoch": 2, "seconds": 4.0}, {"epoch": 2, "seconds": 12.5}]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert training_seconds(path) == pytest.approx(22.5)  # epoch 2 was redone after an interruption
    assert training_seconds(tmp_path / "missing.jsonl") == 0.0
