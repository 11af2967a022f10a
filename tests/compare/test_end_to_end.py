"""`compare report`, `compare run` and `compare predict` on real tiny runs of both sides (no fakes)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, f1_score

from compare import predict
from compare.report import command as report
from compare.report.runs import data_arguments
from compare.run import command as run
from compare.run.launch import data_flags, request_path, request_record
from core import sides
from core.classifier import load
from core.record import read_run
from core.rundir import dir_size

FAST = ["--bootstrap-resamples", "200"]


@pytest.fixture(scope="module")
def paired_runs(tiny_runs: dict, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The shared tiny runs when both saw the same data options; else a scratch partner trained to match."""
    options = {side: read_run(tiny_runs[side]).data.options for side in ("finetune", "scratch")}
    if options["finetune"] == options["scratch"]:
        return {"finetune": tiny_runs["finetune"], "scratch": tiny_runs["scratch"]}
    from tests.scratch.tiny import train_tiny_run

    same = {key: options["finetune"][key] for key in ("seed", "max_length")}
    partner = train_tiny_run(tmp_path_factory.mktemp("partner") / "scratch", tiny_runs["train_file"], **same)
    return {"finetune": tiny_runs["finetune"], "scratch": partner}


def test_report_on_real_runs_matches_their_predictions(paired_runs: dict, tmp_path: Path) -> None:
    out = tmp_path / "report"
    argv = ["--runs", str(paired_runs["finetune"]), str(paired_runs["scratch"]), "--output-dir", str(out)]
    assert report.main([*argv, *FAST, "--latency-samples", "3"]) == 0
    results = json.loads((out / "results.json").read_text())
    rows = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert len(rows) == results["n"] > 0
    gold = [r["gold"] for r in rows]
    for side, path in paired_runs.items():
        pred = [r["predictions"][side]["label"] for r in rows]
        entry = results["models"][side]
        assert entry["accuracy"] == pytest.approx(accuracy_score(gold, pred))
        assert entry["macro_f1"] == pytest.approx(f1_score(gold, pred, labels=results["labels"], average="macro"))
        assert entry["disk_bytes"] == dir_size(path) and entry["latency_p50_ms"] > 0
        model = load(path)
        direct = model.predict_proba([r["text"] for r in rows[:5]])
        saved = np.array([[r["predictions"][side]["probs"][label] for label in model.labels] for r in rows[:5]])
        np.testing.assert_allclose(saved, direct, atol=1e-5)
    assert results["runs"] == {side: str(path) for side, path in paired_runs.items()}


def test_compare_run_reuses_matching_runs_and_reports(paired_runs: dict, tmp_path: Path, caplog) -> None:
    out = tmp_path / "out"
    flags = {"finetune": "--epochs 2", "scratch": "--preset tiny"}
    for side, path in paired_runs.items():
        shutil.copytree(path, out / "runs" / side)
        request = request_record(sides.get(side), flags[side].split(), [])
        request_path(out / "runs" / side).write_text(json.dumps(request))
    data = data_arguments(read_run(paired_runs["finetune"]))
    argv = [*data_flags(data), "--output-dir", str(out), "--profile", "full"]
    argv += ["--finetune-args", flags["finetune"], "--scratch-args", flags["scratch"], *FAST]
    assert run.main(argv) == 0
    assert "reused finetune" in caplog.text and "reused scratch" in caplog.text
    assert caplog.records[-1].getMessage().endswith(str(out / "report.html"))
    results = json.loads((out / "results.json").read_text())
    assert set(results["models"]) == {"finetune", "scratch"}
    assert results["comparison"]["a"] == "finetune" and (out / "runs" / "scratch" / "run.json").is_file()


def test_predict_labels_a_file_with_both_runs(paired_runs: dict, tmp_path: Path) -> None:
    texts = ["a great film", "a dull mess", "i loved every minute"]
    (tmp_path / "in.jsonl").write_text("".join(json.dumps({"review": t}) + "\n" for t in texts))
    argv = ["--runs", str(paired_runs["finetune"]), str(paired_runs["scratch"]), "--input", str(tmp_path / "in.jsonl")]
    assert predict.main([*argv, "--text-column", "review", "--output", str(tmp_path / "out.jsonl")]) == 0
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [r["review"] for r in rows] == texts
    for side, path in paired_runs.items():
        model = load(path)
        expected = model.predict_proba(texts)
        got = np.array([[r["predictions"][side]["probs"][label] for label in model.labels] for r in rows])
        np.testing.assert_allclose(got, expected, atol=1e-5)
