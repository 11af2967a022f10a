"""`compare run --self-pretrain`: the self-pretrained from-scratch model is the report's third model, in
results.json, predictions.jsonl, the lead's split and the app; its options are refused as the sides' are."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from sklearn.metrics import accuracy_score

from compare.report.runs import data_arguments
from compare.run import command as run
from compare.run.command import CompareRunArguments
from compare.run.launch import data_flags, request_path, request_record
from core import sides
from core.record import read_run

TINY_PRETRAINED = "--preset tiny --batch-size 16 --learning-rate 3e-3 --warmup-steps 5 --max-steps 60 "
TINY_PRETRAINED += "--pretrain-steps 30 --pretrain-log-steps 10 --no-onnx"


def test_the_self_pretrained_side_is_compared_only_when_asked() -> None:
    assert sides.classifier_names(CompareRunArguments(output_dir="x").opted_in()) == ["finetune", "scratch"]
    asked = CompareRunArguments(output_dir="x", self_pretrain=True, scratch_args="--preset tiny")
    assert sides.classifier_names(asked.opted_in()) == ["finetune", "scratch", "scratch-pretrained"]
    quick = CompareRunArguments(output_dir="x", self_pretrain=True)
    scratch, pretrained = quick.side_flags("scratch"), quick.side_flags("scratch-pretrained")
    # the same fine-tuning budget, after a pretraining of its own
    assert pretrained == [*scratch, "--self-pretrain", "--pretrain-time-budget", "4"]
    full = CompareRunArguments(output_dir="x", self_pretrain=True, profile="full")
    assert full.side_flags("scratch-pretrained") == [*full.side_flags("scratch"), "--self-pretrain"]
    with pytest.raises(ValueError, match="--scratch-pretrained-args gives flags to the self-pretrained model; add"):
        CompareRunArguments(output_dir="x", scratch_pretrained_args="--mask-rate 0.2")
    with pytest.raises(ValueError, match=r"python -m scratch would refuse .*--mask-rate 2"):
        CompareRunArguments(output_dir="x", self_pretrain=True, scratch_pretrained_args="--mask-rate 2")


@pytest.mark.slow
def test_compare_run_self_pretrain_writes_a_three_model_report(tiny_runs: dict, tmp_path: Path) -> None:
    from demo import prediction
    from demo.sources import load_models

    out = tmp_path / "out"
    assert read_run(tiny_runs["finetune"]).data.options == read_run(tiny_runs["scratch"]).data.options
    flags = {"finetune": "--epochs 2", "scratch": "--preset tiny"}
    for side in flags:  # the two sides' tiny runs, reused as compare run's own
        shutil.copytree(tiny_runs[side], out / "runs" / side)
        request_path(out / "runs" / side).write_text(
            json.dumps(request_record(sides.get(side), flags[side].split(), []))
        )
    data = data_arguments(read_run(tiny_runs["finetune"]))
    argv = [*data_flags(data), "--output-dir", str(out), "--profile", "full", "--bootstrap-resamples", "200"]
    argv += ["--finetune-args", flags["finetune"], "--scratch-args", flags["scratch"], "--self-pretrain"]
    assert run.main([*argv, "--scratch-pretrained-args", TINY_PRETRAINED]) == 0

    pretrained_run = out / "runs" / "scratch-pretrained"
    assert read_run(pretrained_run).pretraining.steps == 30
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    names = ["finetune", "scratch", "scratch-pretrained"]
    assert list(results["models"]) == names
    assert results["models"]["scratch-pretrained"]["title"] == "From-scratch Transformer, self-pretrained"
    assert results["models"]["scratch-pretrained"]["pretrain_steps"] == 30
    assert results["models"]["scratch"]["pretrain_steps"] is None
    rows = [json.loads(line) for line in (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]
    gold = [row["gold"] for row in rows]
    accuracy = {name: accuracy_score(gold, [row["predictions"][name]["label"] for row in rows]) for name in names}
    for name in names:
        assert results["models"][name]["accuracy"] == pytest.approx(accuracy[name])
    lead = results["lead_sources"]
    assert lead["objective"]["diff"] == pytest.approx(accuracy["scratch-pretrained"] - accuracy["scratch"])
    assert lead["external_data"]["diff"] == pytest.approx(accuracy["finetune"] - accuracy["scratch-pretrained"])
    assert lead["lead"]["diff"] == pytest.approx(lead["objective"]["diff"] + lead["external_data"]["diff"])
    for part in ("lead", "objective", "external_data"):
        low, high = lead[part]["ci"]
        assert low <= lead[part]["diff"] <= high
    assert {(p["a"], p["b"]) for p in results["comparisons"]} == {
        ("finetune", "scratch"),
        ("finetune", "scratch-pretrained"),
        ("scratch", "scratch-pretrained"),
    }
    curve = results["pretraining"]["scratch-pretrained"]["curve"]
    assert [point["steps"] for point in curve] == [10, 20, 30] and list(results["pretraining"]) == names[2:]
    assert results["pretraining"]["scratch-pretrained"]["val_masked_accuracy"] == curve[-1]["val_masked_accuracy"]
    assert (out / "pretraining.png").stat().st_size > 0
    report_md = (out / "report.md").read_text(encoding="utf-8")
    assert "Self-pretraining: the masked-LM phase before fine-tuning" in report_md
    assert "| scratch-pretrained | 30 steps |" in report_md
    assert "Where the fine-tuned model's lead comes from" in report_md
    assert "scratch-pretrained (From-scratch Transformer, self-pretrained)" in report_md

    models, problems = load_models([out / "runs" / name for name in names])
    assert problems == [] and list(models) == names
    assert prediction.model_names(models) == names
    assert prediction.title("scratch-pretrained") == "From-scratch Transformer, self-pretrained"


def test_a_bad_unlabeled_file_stops_compare_run_before_any_side_trains(tmp_path: Path, capsys) -> None:
    from tests.compare.fakes import tiny_data

    out = tmp_path / "out"
    argv = [*data_flags(tiny_data(tmp_path / "data")), "--output-dir", str(out), "--self-pretrain"]
    with pytest.raises(SystemExit) as stop:
        run.main([*argv, "--scratch-pretrained-args", f"--unlabeled-file {tmp_path / 'nope.txt'}"])
    assert stop.value.code == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line.startswith("error: --unlabeled-file ") and "nope.txt does not exist" in line
    assert not out.exists()
