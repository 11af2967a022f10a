"""The packaged pretrained model learns SST-2 from 1,000 rows in one epoch (majority class: about 0.51).

The training and validation subsets are written from the local mirror's files; the test split is the mirror's own.
No test converts the packaged model to ONNX, too slow and memory-hungry for a test (docs/results.md, "Test suite:
threads shared between the workers"): tests/finetune/test_onnx.py converts a tiny BERT of the same architecture, and
`make report` converts and checks the packaged one. These runs are served through TensorFlow.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from core.args import DataArguments
from core.classifier import load
from core.data import load_task
from finetune.__main__ import main

pytestmark = pytest.mark.slow  # the packaged model, trained on real data


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
    assert classifier.record.data.splits == {"train": 1000, "validation": 300, "test": 1821}
    assert classifier.labels == ["negative", "positive"] and classifier.runtime == "tensorflow"
    assert (predicted == test["label"].to_numpy()).mean() >= 0.75


def test_ten_steps_on_200_stsb_pairs_run_the_pair_regression_path_on_real_data(data_dir: Path, tmp_path: Path) -> None:
    if not (data_dir / "stsb" / "train.csv").is_file():
        pytest.skip(f"no STS-B mirror in {data_dir}")
    # The real mirror cut down: 1,000 of its 5,749 training pairs (validation is carved from them, and every run and
    # this test score it with the model) and 300 of its 1,500 validation pairs, the test split
    mirror = tmp_path / "mirror" / "stsb"
    mirror.mkdir(parents=True)
    for split, rows in (("train", 1000), ("validation", 300)):
        frame = pd.read_csv(data_dir / "stsb" / f"{split}.csv")
        frame.sample(rows, random_state=0).to_csv(mirror / f"{split}.csv", index=False)
    output = tmp_path / "stsb"
    main([
        "--task", "stsb", "--data-dir", str(mirror.parent), "--max-train-samples", "200", "--max-steps", "10",
        "--no-onnx", "--output-dir", str(output),
    ])  # fmt: skip
    model = load(output)
    run = model.record
    assert (model.problem_type, model.has_pairs, model.labels, model.thresholds) == ("regression", True, [], None)
    assert run.data.text_pair_column == "sentence2" and run.data.splits["train"] == 200
    # GLUE's test labels are hidden: its validation split is the test split, validation is carved from train
    assert run.data.official_splits == {"test": "validation"} and run.data.splits["test"] == 300
    assert run.training.steps == 10 and run.training.early_stopping["monitor"] == "val_spearman"
    task = load_task(DataArguments(**run.data.options))
    assert len(task.texts("validation")) == run.data.splits["validation"] == round(0.1 * 1000)
    values = model.predict_values(task.texts("validation"), task.text_pairs("validation"))
    assert values.shape == (len(task.texts("validation")),) and np.isfinite(values).all()
    gold = task.targets("validation")
    assert run.validation["spearman"] == pytest.approx(spearmanr(gold, values).statistic, abs=1e-6)
    # ten steps from a head that outputs about 0 already move the values toward the 0..5 scores
    assert run.validation["mse"] == pytest.approx(np.mean((values - gold) ** 2), rel=1e-5)
    assert run.validation["mse"] < 0.8 * np.mean(gold.astype(np.float64) ** 2)
