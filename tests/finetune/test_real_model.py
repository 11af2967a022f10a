"""The packaged pretrained model learns SST-2 from 2,000 rows in one epoch (majority class: about 0.51)."""

from __future__ import annotations

from pathlib import Path

from core.args import DataArguments
from core.classifier import load
from core.data import load_task
from finetune.__main__ import main


def test_one_epoch_on_2000_sst2_rows_beats_chance_clearly(data_dir: Path, tmp_path: Path) -> None:
    output = tmp_path / "sst2"
    data = ["--task", "sst2", "--data-dir", str(data_dir)]
    main([*data, "--max-train-samples", "2000", "--epochs", "1", "--output-dir", str(output)])
    classifier = load(output)
    task = load_task(DataArguments(task="sst2", data_dir=str(data_dir)))
    predicted = classifier.predict_proba(task.texts("test")[:500]).argmax(axis=1)
    assert classifier.run["data"]["splits"]["train"] == 2000
    assert (predicted == task.label_ids("test")[:500]).mean() >= 0.75
