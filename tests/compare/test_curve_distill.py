"""`compare curve --distill`: a distilled student at every size, taught by the fine-tuned run of that size and seed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sklearn.metrics import accuracy_score

from compare.curve.command import CurveArguments, build_curve, run_path
from compare.run import launch
from core.data import load_task
from core.record import read_run
from tests.compare.fakes import FakeClassifier, noisy_probs, tiny_data
from tests.compare.test_curve import FakeTrainer

ACCURACY = {"finetune": 0.9, "scratch": 0.55, "scratch-distilled": 0.7}


def test_the_student_joins_the_curve_at_every_size(tmp_path, monkeypatch):
    trainer = FakeTrainer()
    monkeypatch.setattr(launch, "run_command", trainer.run)
    data = tiny_data(tmp_path / "data", n_test=90, seed=5)
    task = load_task(data)
    gold, texts, probs = task.label_ids("test"), task.texts("test"), {}

    def loader(run_dir: Path) -> FakeClassifier:
        side = Path(run_dir).name.rsplit("-n", 1)[0]
        probs[Path(run_dir).name] = noisy_probs(gold, len(task.labels), ACCURACY[side], seed=len(probs))
        run = read_run(run_dir)
        return FakeClassifier(side, task.labels, run, dict(zip(texts, probs[Path(run_dir).name])))

    out = tmp_path / "curve"
    curve = build_curve(data, CurveArguments(output_dir=str(out), sizes="60,120", distill=True), loader=loader)

    sides = ("finetune", "scratch", "scratch-distilled")
    assert {(p["side"], p["size"]) for p in curve["points"]} == {(s, n) for s in sides for n in (60, 120)}
    students = [cmd for cmd in trainer.commands if "--teacher" in cmd]
    assert len(trainer.commands) == 6 and len(students) == 2
    for size, cmd in zip((60, 120), students):
        assert cmd[cmd.index("--teacher") + 1] == str(run_path(out, "finetune", size, 5).resolve())
        assert cmd[cmd.index("--max-train-samples") + 1] == str(size)
        assert cmd[cmd.index("--output-dir") + 1] == str(run_path(out, "scratch-distilled", size, 5))
    for point in curve["points"]:
        predicted = probs[run_path(out, point["side"], point["size"], 5).name].argmax(axis=1)
        assert point["accuracy"] == pytest.approx(accuracy_score(gold, predicted))
    assert json.loads((out / "curve.json").read_text())["points"] == curve["points"]
    assert "scratch-distilled" in (out / "curve.md").read_text()
