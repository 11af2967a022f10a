"""The packaged pretrained model learns SST-2 from 1,000 rows in one epoch (majority class: about 0.51).

The training and validation subsets are written from the local mirror's files; the test split is the mirror's own.
No test converts the packaged model to ONNX, too slow and memory-hungry for a test
(docs/results.md#test-suite-threads-shared-between-the-workers-2026-12-03): tests/finetune/test_onnx.py converts a
tiny BERT of the same architecture, and `make report` converts and checks the packaged one. This run is served
through TensorFlow.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from core.classifier import load
from finetune.__main__ import main


def test_one_epoch_on_1000_sst2_rows_beats_chance_clearly(data_dir: Path, tmp_path: Path) -> None:
    sst2 = data_dir / "sst2"
    train, validation = tmp_path / "train.csv", tmp_path / "validation.csv"
    pd.read_csv(sst2 / "train.csv").sample(1000, random_state=0).to_csv(train, index=False)
    pd.read_csv(sst2 / "validation.csv").head(300).to_csv(validation, index=False)
    output = tmp_path / "sst2"
    main([
        "--train-file", str(train), "--validation-file", str(validation), "--test-file", str(sst2 / "test.csv"),
        "--labels-file", str(sst2 / "labels.txt"), "--epochs", "1", "--batch-size", "16", "--no-onnx",
        "--output-dir", str(output),
    ])  # fmt: skip
    classifier = load(output)
    test = pd.read_csv(sst2 / "test.csv").head(500)
    predicted = classifier.predict_proba(test["text"].tolist()).argmax(axis=1)
    assert classifier.run["data"]["splits"] == {"train": 1000, "validation": 300, "test": 1821}
    assert classifier.labels == ["negative", "positive"] and classifier.runtime == "tensorflow"
    assert (predicted == test["label"].to_numpy()).mean() >= 0.75
