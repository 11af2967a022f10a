"""`compare run --distill` with the sides' commands replaced by a stand-in that writes finished runs: three models,
every pair with Holm-adjusted McNemar p, the gap the student closes (against predictions.jsonl), the student's
flags, and reuse until its teacher is trained again."""

from __future__ import annotations

import dataclasses
import itertools
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binomtest

from compare.render.format import seconds
from compare.report.results import read_predictions
from compare.run import launch
from compare.run.command import CompareRunArguments, run_comparison
from compare.scoring.statistics import StatisticsArguments
from core.record import read_run
from core.rundir import write_json
from demo import report_view
from tests.compare.fakes import fake_loader, fake_run, tiny_data

STATS = StatisticsArguments(bootstrap_resamples=200)
ACCURACY = {"finetune": 0.9, "scratch": 0.6, "scratch-distilled": 0.75}


class FakeSides:
    """Stands in for `python -m <side>`: writes the run it would have trained (a student records its teacher)."""

    def __init__(self, data) -> None:
        self.data, self.calls = data, []

    def __call__(self, cmd: list[str], log: Path | None = None, **options) -> None:
        side, run_dir = cmd[2], Path(cmd[cmd.index("--output-dir") + 1])
        flags = cmd[cmd.index("--overwrite") + 1 :]
        seed = int(cmd[cmd.index("--seed") + 1])
        shutil.rmtree(run_dir, ignore_errors=True)
        fake_run(run_dir, side, dataclasses.replace(self.data, seed=seed))
        if "--teacher" in flags:
            teacher = flags[flags.index("--teacher") + 1]
            run = read_run(run_dir).to_json()
            run["distillation"] = {"teacher": teacher, "teacher_created": read_run(teacher).created}
            write_json(run_dir / "run.json", run)
        self.calls.append((side, run_dir.name, flags))


@pytest.fixture
def setup(tmp_path: Path, monkeypatch):
    data = tiny_data(tmp_path / "data")
    sides = FakeSides(data)
    monkeypatch.setattr(launch, "run_command", sides)
    return data, sides, fake_loader(ACCURACY, data), tmp_path / "out"


def distil(data, out: Path, loader) -> dict:
    args = CompareRunArguments(
        output_dir=str(out), distill=True, scratch_args="--preset tiny", distill_args="--augment 2 --temperature 3"
    )
    return run_comparison(data, args, STATS, loader=loader)


def test_three_models_every_pair_and_the_gap_closed(setup) -> None:
    data, sides, loader, out = setup
    results = distil(data, out, loader)
    assert list(results["models"]) == ["finetune", "scratch", "scratch-distilled"]
    assert results["runs"]["scratch-distilled"] == str(out / "runs" / "scratch-distilled")
    side, name, flags = sides.calls[-1]
    teacher = str((out / "runs" / "finetune").resolve())
    assert (side, name) == ("scratch", "scratch-distilled")
    assert flags[-8:] == ["--preset", "tiny", "--teacher", teacher, "--augment", "2", "--temperature", "3"]

    rows = read_predictions(out / "predictions.jsonl")
    gold = np.array([row["gold"] for row in rows])
    pred = {name: np.array([row["predictions"][name]["label"] for row in rows]) for name in results["models"]}
    accuracy = {name: float((p == gold).mean()) for name, p in pred.items()}
    expected = (accuracy["scratch-distilled"] - accuracy["scratch"]) / (accuracy["finetune"] - accuracy["scratch"])
    gap = results["gap_closed"]
    assert gap["value"] == pytest.approx(expected)
    assert gap["ci"][0] <= expected <= gap["ci"][1] and gap["resamples_used"] == STATS.bootstrap_resamples

    pairs = results["comparisons"]
    assert [(p["a"], p["b"]) for p in pairs] == list(itertools.combinations(results["models"], 2))
    raw = []
    for p in pairs:
        right_a, right_b = pred[p["a"]] == gold, pred[p["b"]] == gold
        b, c = int((right_a & ~right_b).sum()), int((~right_a & right_b).sum())
        assert (p["mcnemar_b"], p["mcnemar_c"]) == (b, c)
        assert p["accuracy_diff"] == pytest.approx(accuracy[p["a"]] - accuracy[p["b"]])
        raw.append(binomtest(b, b + c, 0.5).pvalue if b + c else 1.0)
    order = np.argsort(raw)
    holm = np.maximum.accumulate([min(1.0, (3 - rank) * raw[i]) for rank, i in enumerate(order)])
    for rank, i in enumerate(order):
        assert pairs[i]["mcnemar_p"] == pytest.approx(raw[i])
        assert pairs[i]["mcnemar_p_holm"] == pytest.approx(holm[rank])
    assert results["comparison"]["a"] == "finetune" and results["comparison"]["b"] == "scratch"

    report = (out / "report.md").read_text()
    assert "Every pair (paired bootstrap)" in report and f"Gap closed by distillation: {expected * 100:.0f}%" in report
    assert "scratch-distilled" in (out / "report.html").read_text()
    shown = [line for line in report_view.distillation(results).splitlines() if line.startswith("|")]
    assert len(shown) > 4 and all(line in report for line in shown)  # the app's report tab says what report.md says


@pytest.mark.slow
def test_the_student_is_reused_until_its_teacher_is_trained_again(setup) -> None:
    data, sides, loader, out = setup
    distil(data, out, loader)
    trained = len(sides.calls)
    distil(data, out, loader)
    assert len(sides.calls) == trained  # everything reused
    teacher = out / "runs" / "finetune"
    run = read_run(teacher).to_json()
    write_json(teacher / "run.json", {**run, "created": "2030-01-01T00:00:00+00:00"})
    distil(data, out, loader)
    assert [name for _, name, _ in sides.calls[trained:]] == ["scratch-distilled"]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--distill", "--tune", "2"], "--distill does not combine with --tune"),
        (["--distill-args", "--augment 2"], "--distill-args is for the distilled student; add --distill"),
        (["--distill", "--distill-args", '--augment "2'], "--distill-args cannot be split"),
        (
            ["--distill", "--distill-args", "--temperature 0"],
            "python -m scratch would refuse --min-steps 800 --max-steps 2000 --time-budget 3 --patience 3 --eval-steps "
            "250 --teacher TEACHER --temperature 0 (the quick profile's --min-steps 800 --max-steps 2000 --time-budget "
            "3 --patience 3 --eval-steps 250, then --teacher, then --distill-args): --temperature must be positive",
        ),
        (
            ["--distill", "--class-weight", "balanced"],
            "--class-weight balanced --teacher TEACHER (the quick profile's --min-steps 800 --max-steps 2000 "
            "--time-budget 3 --patience 3 --eval-steps 250, then --class-weight, then --teacher): --class-weight "
            "balanced does not combine with --teacher",
        ),
    ],
)
def test_bad_distillation_options_are_refused_before_training(flags, message, tmp_path, monkeypatch, capsys):
    from compare.run import command

    def no_training(*args, **kwargs):
        raise AssertionError("trained despite a bad option")

    monkeypatch.setattr(launch, "run_command", no_training)
    with pytest.raises(SystemExit):
        command.main(["--task", "sst2", "--output-dir", str(tmp_path / "out"), *flags])
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_a_student_of_the_tiny_fine_tuned_run_is_reported_beside_both_sides(tiny_runs, tmp_path) -> None:
    """The real thing on the tiny fixture runs: the fine-tuned run teaches a tiny student, the report scores all three."""
    from compare.report.command import main as report_main
    from tests.scratch.tiny import train_tiny_run

    student = train_tiny_run(
        tmp_path / "student",
        tiny_runs["train_file"],
        teacher=tiny_runs["finetune"],
        seed=0,
        max_length=16,
        max_steps=40,
        no_onnx=True,  # the report serves it through TensorFlow
    )
    record = read_run(student).distillation
    assert record["teacher_side"] == "finetune" and record["soft_targets"] == "log_probabilities"
    runs = [str(tiny_runs["finetune"]), str(tiny_runs["scratch"]), str(student)]
    argv = ["--runs", *runs, "--names", "finetune", "scratch", "scratch-distilled", "--output-dir", str(tmp_path / "r")]
    assert report_main([*argv, "--latency-samples", "2", "--bootstrap-resamples", "200"]) == 0
    results = json.loads((tmp_path / "r" / "results.json").read_text())
    assert len(results["comparisons"]) == 3
    labelling = record["seconds"]
    assert results["models"]["scratch-distilled"]["teacher_seconds"] == labelling > 0
    assert results["models"]["scratch"]["teacher_seconds"] is None
    cost = (tmp_path / "r" / "report.md").read_text().split("### Cost")[1].split("###")[0]
    assert f" + {seconds(labelling)} teacher |" in cost and cost.count(" teacher |") == 1
    rows = read_predictions(tmp_path / "r" / "predictions.jsonl")
    accuracy = {
        name: np.mean([row["predictions"][name]["label"] == row["gold"] for row in rows]) for name in results["models"]
    }
    gap = accuracy["finetune"] - accuracy["scratch"]
    if gap == 0:
        assert results["gap_closed"]["value"] is None
    else:
        expected = (accuracy["scratch-distilled"] - accuracy["scratch"]) / gap
        assert results["gap_closed"]["value"] == pytest.approx(expected)
