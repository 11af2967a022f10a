from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from compare.run import launch
from compare.run.launch import data_flags, request_path, reusable, train_side
from core import sides
from core.args import DataArguments
from core.pairs import PairDataArguments
from core.parsing import parse_args
from core.processes import ProcessError
from core.sides import Side, SideTask
from core.task_kinds import CLASSIFICATION
from tests.compare.fakes import fake_run, tiny_data

SCRATCH, FINETUNE = sides.get("scratch"), sides.get("finetune")


def test_data_flags_parse_back_to_the_same_options(tmp_path: Path) -> None:
    data = DataArguments(
        train_file=str(tmp_path / "t.csv"),
        text_column=["title", "body"],
        label_column="y",
        max_train_samples=50,
        seed=7,
    )
    (parsed,) = parse_args((DataArguments,), data_flags(data))
    assert parsed == data


def fake_side(calls: list, data: DataArguments):
    """Stands in for `core.processes.run_command` starting `python -m <side>`: records the command and writes
    a finished run where it was told."""

    def run(cmd, **kwargs):
        calls.append(cmd)
        side, out = cmd[2], Path(cmd[cmd.index("--output-dir") + 1])
        fake_run(out, side, data)
        return ""

    return run


def test_a_matching_run_is_reused_and_a_changed_one_retrained(tmp_path: Path, monkeypatch) -> None:
    data = tiny_data(tmp_path / "data")
    calls: list = []
    monkeypatch.setattr(launch, "run_command", fake_side(calls, data))
    run_dir = tmp_path / "runs" / "scratch"
    assert train_side(SCRATCH, data, ["--epochs", "1"], run_dir) == (run_dir, False)
    assert calls[0][1:4] == ["-m", "scratch", "--train-file"] and calls[0][-2:] == ["--epochs", "1"]
    assert json.loads(request_path(run_dir).read_text())["flags"] == ["--epochs", "1"]
    assert train_side(SCRATCH, data, ["--epochs", "1"], run_dir) == (run_dir, True)
    assert len(calls) == 1
    assert not reusable(SCRATCH, data, ["--epochs", "2"], run_dir)
    assert not reusable(FINETUNE, data, ["--epochs", "1"], run_dir)
    assert not reusable(SCRATCH, DataArguments(**{**data.to_dict(), "seed": 1}), ["--epochs", "1"], run_dir)

    def rewrite(cmd, **kwargs):  # the side replaces its run, as --overwrite does
        import shutil

        shutil.rmtree(Path(cmd[cmd.index("--output-dir") + 1]))
        return fake_side(calls, data)(cmd)

    monkeypatch.setattr(launch, "run_command", rewrite)
    assert train_side(SCRATCH, data, ["--epochs", "2"], run_dir) == (run_dir, False)
    assert train_side(SCRATCH, data, ["--epochs", "2"], run_dir, retrain=True) == (run_dir, False)
    assert len(calls) == 3


def test_a_run_trained_under_other_defaults_is_not_reused(tmp_path: Path, monkeypatch, caplog) -> None:
    data = tiny_data(tmp_path / "data")
    monkeypatch.setattr(launch, "run_command", fake_side([], data))
    run_dir = tmp_path / "runs" / "scratch"
    train_side(SCRATCH, data, [], run_dir)
    recorded = json.loads(request_path(run_dir).read_text())["defaults"]
    assert recorded["warmup_ratio"] == 0.1 and recorded["preset"] == "small"
    assert reusable(SCRATCH, data, [], run_dir)
    changed = {**recorded, "warmup_ratio": 0.2}
    monkeypatch.setattr(launch, "side_defaults", lambda side: changed)
    caplog.set_level(logging.INFO, logger="compare.run.launch")
    assert not reusable(SCRATCH, data, [], run_dir)
    assert "the defaults of python -m scratch changed" in caplog.text


def test_a_failing_side_raises_with_the_end_of_its_log(tmp_path: Path, monkeypatch) -> None:
    data = tiny_data(tmp_path / "data")
    missing = Side(
        "no_such_side", "", "", "no_such_side", {CLASSIFICATION: SideTask("no_such_side:Arguments", "no_such_side")}
    )
    monkeypatch.setitem(sides.SIDES, missing.name, missing)  # a side whose command cannot start
    with pytest.raises(ProcessError, match=r"(?s)no_such_side.*failed \(exit 1\).*No module named no_such_side"):
        train_side(missing, data, [], tmp_path / "runs" / "x")
    assert not (tmp_path / "runs" / "x").exists()


def test_absolute_paths_keep_a_symbolic_link_as_given(tmp_path: Path, monkeypatch) -> None:
    # A side run directly records the path it was given; resolving the link here would make that run look
    # like one trained on other data, and `compare run` would train it again.
    (tmp_path / "mirror").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "mirror")
    monkeypatch.chdir(tmp_path)
    data = launch.absolute_paths(DataArguments(task="sst2", data_dir="link"))
    assert data.data_dir == str(tmp_path / "link")
    pairs = launch.absolute_paths(PairDataArguments(task="pt_en", data_dir="./link/../link"))
    assert pairs.data_dir == str(tmp_path / "link")


def test_a_training_side_is_heard_from_at_least_every_interval(caplog) -> None:
    """The heartbeat's lines, a side's latest progress line each, come at least every interval while the side runs,
    also through a long silence (an ONNX conversion), and stop with it."""
    import sys
    import time

    from compare.progress import Heartbeat
    from core.processes import run_command

    side = (
        "import time\n"
        "for step in (10, 20, 30):\n"
        "    print(f'2026-12-06 22:31:05,075 INFO core.training.callbacks: step {step}/30, loss 0.5', flush=True)\n"
        "    time.sleep(0.5)\n"
        "print('2026-12-06 22:31:06,000 INFO core.onnx: Converting to ONNX', flush=True)\n"
        "time.sleep(2.0)\n"
    )
    caplog.set_level(logging.INFO, logger="compare")
    start = time.time()
    with Heartbeat("scratch", interval=0.4) as heartbeat:
        run_command([sys.executable, "-c", side], on_line=heartbeat.on_line)
    ended = time.time()
    beats = [r for r in caplog.records if r.getMessage().lstrip().startswith("scratch, ")]
    times = [start, *(r.created for r in beats), ended]
    assert len(beats) >= 6 and max(b - a for a, b in zip(times, times[1:])) < 0.4 + 0.3
    assert "s in: step " in beats[0].getMessage()  # the side's own words: how far it has come
    assert beats[-1].getMessage().endswith(": Converting to ONNX")
    caplog.clear()
    time.sleep(0.6)
    assert not caplog.records  # nothing once the side has ended
    assert launch.HEARTBEAT_SECONDS == 30
