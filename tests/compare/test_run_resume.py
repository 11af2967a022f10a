"""`compare run` interrupted while its second side trains, then run again with the same command: the first side is
reused, the second resumes from its backup, and the report is the uninterrupted run's."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from compare.run.launch import request_path
from core.record import read_run
from core.training.loop import backed_up_epochs
from tests.conftest import ROOT, separable_rows, write_csv
from tests.core.test_interrupts import environment


def command(train: Path, bert: Path, output: Path) -> list[str]:
    # The from-scratch side validates every 10 of its 120 steps in batches of 8: twelve validations, each backed up.
    scratch = "--preset tiny --batch-size 8 --max-steps 120 --eval-steps 10 --learning-rate 3e-3 --no-onnx"
    finetune = f"--model {bert} --max-steps 30 --batch-size 16 --no-onnx"
    return [
        sys.executable, "-m", "compare", "run", "--train-file", str(train), "--max-length", "16",
        "--output-dir", str(output), "--profile", "full", "--bootstrap-resamples", "200",
        "--side-args", f"finetune={finetune}", f"scratch={scratch}",
    ]  # fmt: skip


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.is_file() else []


@pytest.mark.slow
def test_an_interrupted_compare_run_resumes_where_it_stopped_and_reports_as_if_it_had_not(tmp_path: Path) -> None:
    from tests.finetune.tiny import make_tiny_bert

    train = write_csv(tmp_path / "train.csv", separable_rows(600))
    bert = make_tiny_bert(tmp_path / "bert")
    out = tmp_path / "interrupted"
    argv = command(train, bert, out)
    process = subprocess.Popen(argv, cwd=ROOT, env=environment(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    history = out / "runs" / "scratch.partial" / "history.jsonl"
    deadline = time.monotonic() + 600
    while process.poll() is None and time.monotonic() < deadline:
        if len(lines(history)) >= 3 and (history.parent / "backup").exists():  # three validations backed up
            process.send_signal(signal.SIGINT)
            break
        time.sleep(0.2)
    _, err = process.communicate(timeout=300)
    err = err.decode()
    assert process.returncode == 130, err[-3000:]
    before = lines(history)
    assert 3 <= len(before) < 12 and (out / "runs" / "finetune" / "run.json").is_file()
    last = err.strip().splitlines()[-1]
    assert last.startswith("interrupted (SIGINT): the finished runs are kept and the same command reuses them; ")
    kept = backed_up_epochs(history.parent)  # the last line's epoch is redone when its backup was not yet written
    assert kept in (len(before) - 1, len(before))
    assert f"it resumes the unfinished run {history.parent} ({kept} epochs finished" in last

    again = subprocess.run(argv, cwd=ROOT, env=environment(), capture_output=True, text=True, timeout=900)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "Reusing" in again.stderr and str(out / "runs" / "finetune") in again.stderr
    assert f"Resuming scratch from its unfinished run ({kept} epochs finished" in again.stderr
    after = read_run(out / "runs" / "scratch").training.history  # each validation once, a redone one as redone
    assert [row["epoch"] for row in after] == list(range(1, len(after) + 1)) and len(after) > len(before)
    assert [row["steps"] for row in after] == [10 * row["epoch"] for row in after]
    assert after[: len(before) - 1] == before[:-1]  # the last may have been redone: its backup was not yet written

    # The same command never interrupted. Its fine-tuned side is the finished one above (reused, not trained again):
    # the interruption was the from-scratch side's.
    straight = tmp_path / "straight"
    (straight / "runs").mkdir(parents=True)
    shutil.copytree(out / "runs" / "finetune", straight / "runs" / "finetune")
    shutil.copy(request_path(out / "runs" / "finetune"), straight / "runs")
    done = subprocess.run(command(train, bert, straight), cwd=ROOT, env=environment(), capture_output=True, text=True)
    assert done.returncode == 0 and "Reusing" in done.stderr, done.stderr[-3000:]
    results = [json.loads((folder / "results.json").read_text()) for folder in (out, straight)]
    for name in ("finetune", "scratch"):
        assert results[0]["models"][name]["accuracy"] == results[1]["models"][name]["accuracy"]
        assert results[0]["models"][name]["log_loss"] == pytest.approx(results[1]["models"][name]["log_loss"], abs=1e-6)
    assert (out / "predictions.jsonl").read_text() == (straight / "predictions.jsonl").read_text()
