"""The report's calibration entries and label audit (`compare.report.trust`), through `build_report` with fake
classifiers over real tiny splits: ECE before and after temperature scaling against a hand computation, and flipped
gold labels found at the top of `label_issues`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from scipy.special import softmax

from compare.report.command import ReportArguments, build_report
from compare.report.results import read_predictions
from compare.scoring.statistics import StatisticsArguments
from core.args import DataArguments
from core.data import load_task
from tests.compare.fakes import (
    LABELS,
    FakeClassifier,
    fake_loader,
    fake_run,
    multilabel_data,
    pair_regression_data,
    tiny_data,
    write_rows,
)

STATS = StatisticsArguments(bootstrap_resamples=200)


def no_figures(results: dict, outputs: dict, gold: np.ndarray) -> dict[str, bytes]:
    return {}


def report(runs: list[Path], out: Path, loader) -> dict:
    args = ReportArguments(runs=[str(r) for r in runs], output_dir=str(out), latency_samples=3)
    return build_report(args, STATS, loader=loader, draw=no_figures)


def ece_by_hand(probs: np.ndarray, gold: np.ndarray, bins: int = 15) -> float:
    """Expected calibration error written out: per equal-width bin of the top probability, the share of examples
    times |accuracy - mean confidence|."""
    total = 0.0
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        top = probs.max(axis=1)
        members = [i for i in range(len(gold)) if lo <= top[i] < hi or (b == bins - 1 and top[i] == 1.0)]
        if members:
            accuracy = np.mean([probs[i].argmax() == gold[i] for i in members])
            total += len(members) / len(gold) * abs(accuracy - np.mean([top[i] for i in members]))
    return total


def test_ece_before_and_after_calibration_match_a_hand_computation(tmp_path: Path) -> None:
    data = tiny_data(tmp_path / "data")
    calibration = {"method": "temperature", "validation_nll_before": 0.9, "validation_nll_after": 0.7}
    runs = [
        fake_run(tmp_path / "runs" / "finetune", "finetune", data, calibration={**calibration, "temperatures": [2.0]}),
        fake_run(tmp_path / "runs" / "scratch", "scratch", data),  # written before calibration: T = 1
    ]
    loader = fake_loader({"finetune": 0.8, "scratch": 0.6}, data)
    results = report(runs, tmp_path / "report", loader)
    saved = json.loads((tmp_path / "report" / "results.json").read_text())
    task = load_task(data)
    gold = task.label_ids("test")
    for run, temperature in zip(runs, (2.0, 1.0)):
        given = loader(run).predict_proba(task.texts("test")).astype(np.float64)  # calibrated, as predict_proba gives
        before = softmax(np.log(given) * temperature, axis=1)  # the scores at T = 1
        entry = saved["models"][run.name]
        assert entry["ece"] == pytest.approx(ece_by_hand(given, gold), abs=1e-9)
        assert entry["ece_uncalibrated"] == pytest.approx(ece_by_hand(before, gold), abs=1e-6)
        for key in ("ece", "ece_uncalibrated"):
            lo, hi = entry[f"{key}_ci"]
            assert lo <= entry[key] <= hi
    assert saved["models"]["finetune"]["temperatures"] == [2.0]
    assert saved["models"]["scratch"]["temperatures"] is None
    assert saved["models"]["scratch"]["ece_uncalibrated"] == pytest.approx(saved["models"]["scratch"]["ece"])
    assert saved["models"]["finetune"]["ece_uncalibrated"] != pytest.approx(saved["models"]["finetune"]["ece"])
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "Calibration: before and after temperature scaling" in markdown
    assert results["trust_seconds"]["calibration"] >= 0


def flipped_data(folder: Path, flips: int, n_test: int = 240) -> tuple[DataArguments, set[int]]:
    """`tiny_data` whose test split has `flips` gold labels changed (each text still names its true class)."""
    data = tiny_data(folder, n_test=n_test)
    rng = np.random.default_rng(5)
    flipped = set(rng.choice(n_test, flips, replace=False).tolist())
    rows = []
    for i in range(n_test):
        true = LABELS[i % 3]
        given = LABELS[(i + 1) % 3] if i in flipped else true
        rows.append((f"example {2000 + i} about {true}", given))
    write_rows(Path(data.test_file), ["text", "label"], rows)
    return data, flipped


def truthful_loader(accuracies: dict[str, float], data: DataArguments):
    """Fake models right on the true labels (each text names its class) `accuracy` of the time, whatever the gold
    file says; they answer every split."""
    task = load_task(data)
    from core.record import read_run

    def load(path: Path, name: str | None = None) -> FakeClassifier:
        rng = np.random.default_rng(sum(map(ord, Path(path).name)))
        table = {}
        for split in ("validation", "test"):
            for text in task.texts(split):
                true = LABELS.index(re.search(r"about (\w+)", text).group(1))
                right = rng.random() < accuracies[Path(path).name]
                answer = true if right else (true + 1 + rng.integers(0, 2)) % 3
                probs = rng.dirichlet(np.ones(3)) * 0.2
                probs[answer] += 0.8
                table[text] = probs
        record = read_run(path)
        model = FakeClassifier(record.side, record.labels, record, table)
        model.name = name or record.side
        return model

    return load


def test_flipped_test_labels_top_the_label_issues(tmp_path: Path) -> None:
    data, flipped = flipped_data(tmp_path / "data", flips=12)  # 5% of 240
    runs = [fake_run(tmp_path / "runs" / side, side, data) for side in ("finetune", "scratch")]
    results = report(runs, tmp_path / "report", truthful_loader({"finetune": 0.95, "scratch": 0.9}, data))
    saved = json.loads((tmp_path / "report" / "results.json").read_text())
    issues = saved["label_issues"]
    assert [row["score"] for row in issues] == sorted(row["score"] for row in issues)
    test_issues = [row for row in issues if row["split"] == "test"]
    top = {row["index"] for row in test_issues[: len(flipped)]}
    assert len(top & flipped) >= 0.8 * len(flipped)  # most of the flips lead the list
    task = load_task(data)
    given = task.label_ids("test")
    for row in test_issues[: len(flipped)]:
        if row["index"] in flipped:
            assert row["given"] == LABELS[given[row["index"]]]
            assert row["suggested"] == LABELS[row["index"] % 3]  # the true class
    assert {row["split"] for row in issues} <= {"test", "validation"}
    audit = saved["label_audit"]
    assert audit["splits"]["test"]["n"] == 240 and audit["splits"]["validation"]["n"] == 60
    assert audit["splits"]["test"]["doubted"] == len(test_issues)
    for name in ("finetune", "scratch"):  # without the doubted labels each model scores higher
        kept = audit["without_doubted"][name]
        assert kept["accuracy"] > saved["models"][name]["accuracy"]
        assert kept["n"] == 240 - len(test_issues)
        assert kept["accuracy_ci"][0] <= kept["accuracy"] <= kept["accuracy_ci"][1]
    rows = read_predictions(tmp_path / "report" / "predictions.jsonl")
    quality = np.array([row["label_quality"] for row in rows])
    assert all(quality[row["index"]] == pytest.approx(row["score"]) for row in test_issues)
    assert len(set(np.argsort(quality)[: len(flipped)].tolist()) & flipped) >= 0.8 * len(flipped)
    examples = audit["examples"]
    assert examples[0]["index"] == test_issues[0]["index"] and set(examples[0]["models"]) == {"finetune", "scratch"}
    assert examples[0]["text"] == task.texts("test")[examples[0]["index"]]
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "The most doubted test labels" in markdown and "without the doubted examples" in markdown
    assert results["trust_seconds"]["label_audit"] > 0


def test_a_multi_label_report_doubts_label_sets(tmp_path: Path) -> None:
    data = multilabel_data(tmp_path / "data")
    runs = [fake_run(tmp_path / "runs" / side, side, data) for side in ("finetune", "scratch")]
    report(runs, tmp_path / "report", fake_loader({"finetune": 0.9, "scratch": 0.8}, data))
    saved = json.loads((tmp_path / "report" / "results.json").read_text())
    audit = saved["label_audit"]
    assert audit["audited"] and set(audit["splits"]) == {"test", "validation"}
    assert saved["label_issues"], "a model wrong on 10-20% of label decisions leaves some doubted label sets"
    assert all(isinstance(row["given"], list) and isinstance(row["suggested"], list) for row in saved["label_issues"])
    assert "macro_f1" in audit["without_doubted"]["finetune"]
    assert all("label_quality" in row for row in read_predictions(tmp_path / "report" / "predictions.jsonl"))


def test_a_regression_report_says_why_no_label_is_doubted(tmp_path: Path) -> None:
    data = pair_regression_data(tmp_path / "data")
    runs = [fake_run(tmp_path / "runs" / side, side, data) for side in ("finetune", "scratch")]
    report(runs, tmp_path / "report", fake_loader({"finetune": 0.9, "scratch": 0.5}, data))
    saved = json.loads((tmp_path / "report" / "results.json").read_text())
    assert saved["label_issues"] == [] and not saved["label_audit"]["audited"]
    assert "cleanlab" in saved["label_audit"]["note"]
    assert "ece_uncalibrated" not in saved["models"]["finetune"]
    assert "label_quality" not in read_predictions(tmp_path / "report" / "predictions.jsonl")[0]
