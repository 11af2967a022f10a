"""`compare run --audit-train K` (`compare.run.audit`): K tiny from-scratch fold models give every train row
probabilities from a model that did not train on it, and the report doubts train labels from them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from compare.progress import Progress
from compare.report.command import ReportArguments, build_report
from compare.run.audit import audit_train, check_audit
from compare.run.command import CompareRunArguments
from compare.scoring.statistics import StatisticsArguments
from core.args import DataArguments
from core.data import load_task
from core.errors import UserError
from core.record import read_run
from tests.compare.fakes import fake_loader, fake_run, pair_regression_data
from tests.conftest import separable_rows, write_csv


@pytest.mark.slow  # two tiny from-scratch trainings of 20 steps
def test_audit_train_cross_validates_the_train_split_and_the_report_doubts_its_labels(tmp_path: Path) -> None:
    rows = separable_rows(160)
    flipped = [3, 10, 17]
    for i in flipped:  # a few wrong gold labels in train
        text, label = rows[i]
        rows[i] = (text, "negative" if label == "positive" else "positive")
    data = DataArguments(train_file=str(write_csv(tmp_path / "train.csv", rows)), max_length=16, seed=0)
    args = CompareRunArguments(
        output_dir=str(tmp_path / "out"), profile="full", scratch_args="--preset tiny --max-steps 20 --no-onnx"
    )
    found = audit_train(data, args, 2, Progress())
    task = load_task(data)
    n = len(task.texts("train"))
    assert found["probabilities"].shape == (n, 2) and found["folds"] == 2 and found["seconds"] > 0
    np.testing.assert_allclose(found["probabilities"].sum(axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(found["gold"], task.targets("train"))
    held_out = []
    for k in range(2):
        fold = read_run(tmp_path / "out" / "runs" / "audit-train" / f"fold-{k}" / "run")
        assert fold.side == "scratch" and fold.hyperparameters["max_steps"] == 20
        assert fold.labels == task.labels  # the same label ids, whatever a fold holds
        test_file = Path(fold.data.options["test_file"])
        held_out += test_file.read_text().splitlines()[1:]
        assert fold.data.splits["validation"] == len(task.texts("validation"))
    assert len(held_out) == n  # every train row held out exactly once

    runs = [fake_run(tmp_path / "runs" / side, side, data) for side in ("finetune", "scratch")]
    report = ReportArguments(runs=[str(r) for r in runs], output_dir=str(tmp_path / "report"), latency_samples=3)
    stats = StatisticsArguments(bootstrap_resamples=200)
    build_report(report, stats, loader=fake_loader({"finetune": 0.9, "scratch": 0.8}, data), train_audit=found)
    saved = json.loads((tmp_path / "report" / "results.json").read_text())
    audit = saved["label_audit"]
    assert audit["splits"]["train"]["n"] == n and audit["train_audit"]["folds"] == 2
    train_issues = [row for row in saved["label_issues"] if row["split"] == "train"]
    assert len(train_issues) == audit["splits"]["train"]["doubted"]
    for row in train_issues:
        assert row["given"] == task.labels[int(task.targets("train")[row["index"]])]


def test_audit_train_is_refused_for_values_and_bad_fold_counts(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="--audit-train doubts class labels"):
        check_audit(load_task(pair_regression_data(tmp_path / "data")), 3)
    with pytest.raises(ValueError, match="--audit-train takes a number of folds from 2 to 20, got 1"):
        CompareRunArguments(output_dir="x", audit_train=1)
