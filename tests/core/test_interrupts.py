"""Ctrl-C and SIGTERM: a training command ends with one line naming what it kept and the command that resumes it,
a new run refuses to discard an unfinished one, and a command's children are stopped with it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from core.interrupts import command_line, program, resume_argv
from tests.conftest import ROOT, separable_rows, write_csv


def test_the_resume_command_adds_resume_and_drops_overwrite() -> None:
    assert resume_argv(["--task", "sst2", "--output-dir", "o"]) == ["--task", "sst2", "--output-dir", "o", "--resume"]
    assert resume_argv(["--overwrite", "--task", "sst2"]) == ["--task", "sst2", "--resume"]
    assert resume_argv(["--overwrite", "true", "--seed", "1"]) == ["--seed", "1", "--resume"]
    assert resume_argv(["--overwrite=true", "--resume"]) == ["--resume"]
    assert resume_argv(["--task", "sst2", "--resume"]) == ["--task", "sst2", "--resume"]


def test_the_command_line_is_quoted_for_a_shell() -> None:
    line = command_line(["--train-file", "my data.csv", "--output-dir", "o"])
    assert line == f"{program()} --train-file 'my data.csv' --output-dir o"


def python_shown() -> str:
    """How the commands started below (from the checkout) name this interpreter in what they print."""
    relative = os.path.relpath(sys.executable, ROOT)
    return sys.executable if relative.startswith("..") else relative


def environment() -> dict[str, str]:
    """The commands' environment as a user has it: no TensorFlow log level set, the checkout importable."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TF_USE_LEGACY_KERAS": "1"}
    env.pop("TF_CPP_MIN_LOG_LEVEL", None)
    return env


def run(argv: list[str], timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *argv], cwd=ROOT, env=environment(), capture_output=True, text=True, timeout=timeout
    )


def start_and_signal(
    argv: list[str], partial: Path, signal_number: int, epochs_done: int = 1, written: str = "history.jsonl"
) -> tuple[int, str]:
    """Starts `python ARGV`, sends `signal_number` once `epochs_done` epochs are in its training log and `written`
    exists in the unfinished run; returns its exit status and stderr."""
    process = subprocess.Popen(
        [sys.executable, *argv],
        cwd=ROOT,
        env=environment(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    history = partial / "history.jsonl"
    deadline = time.monotonic() + 600
    while process.poll() is None and time.monotonic() < deadline:
        logged = history.is_file() and len(history.read_text().splitlines()) >= epochs_done
        if logged and (partial / written).exists():
            process.send_signal(signal_number)
            break
        time.sleep(0.2)
    _, err = process.communicate(timeout=300)
    return process.returncode, err


@pytest.mark.slow
def test_ctrl_c_keeps_a_resumable_run_and_a_new_run_does_not_discard_it(tmp_path: Path) -> None:
    from tests.finetune.tiny import make_tiny_bert

    train = write_csv(tmp_path / "train.csv", separable_rows(500))
    output, partial = tmp_path / "run", tmp_path / "run.partial"
    flags = ["--train-file", str(train), "--output-dir", str(output), "--model", str(make_tiny_bert(tmp_path / "bert"))]
    # Batches of 2: an epoch of 203 steps, long enough for the signal to arrive in the second one.
    argv = ["-m", "finetune", *flags, "--epochs", "2", "--batch-size", "2", "--max-length", "16", "--no-onnx"]
    argv += ["--overwrite"]
    # The backup (its `checkpoint` index) is written after the epoch's training-log line: waiting for both keeps it.
    status, err = start_and_signal(argv, partial, signal.SIGINT, written="backup/chief/checkpoint")
    assert status == 130, err[-2000:]
    assert "Traceback" not in err
    resume = [*argv[:-1], "--resume"]  # the same command line, --overwrite (which would discard the run) left out
    resume_command = f"{python_shown()} {' '.join(resume)}"
    (epoch,) = [json.loads(line) for line in (partial / "history.jsonl").read_text().splitlines()]
    kept = f"1 epoch finished, {epoch['steps']} steps"  # 405 training rows of 500, in batches of 2: 203
    last = err.strip().splitlines()[-1]
    assert (
        last
        == f"interrupted (SIGINT): the unfinished run is kept in {partial} ({kept}); resume it with: {resume_command}"
    )
    assert {"resume.json", "history.jsonl", "backup"} <= {path.name for path in partial.iterdir()}
    assert not output.exists()

    again = run(argv[:-1])  # the first command line without --overwrite
    assert again.returncode == 2, again.stderr[-2000:]
    assert again.stderr.strip().splitlines()[-1] == (
        f"error: {partial} holds an unfinished run ({kept}); resume it with: {resume_command}, or pass --overwrite to "
        "start again."
    )
    assert partial.is_dir()

    resumed = run(resume)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert (output / "run.json").is_file() and not partial.exists()
    assert "Resuming the unfinished run" in resumed.stderr


@pytest.mark.slow
def test_sigterm_ends_a_translation_run_with_one_line(tmp_path: Path) -> None:
    from tests.scratch.translation.toy import toy_pairs, write_tsv

    train = write_tsv(tmp_path / "train.tsv", toy_pairs(400))
    output, partial = tmp_path / "run", tmp_path / "run.partial"
    argv = ["-m", "scratch", "--train-file", str(train), "--source-column", "pt", "--target-column", "en"]
    argv += ["--output-dir", str(output), "--preset", "tiny", "--epochs", "50", "--max-length", "32"]
    # After the second epoch's log line and a backup: the first epoch's backup is written by then.
    status, err = start_and_signal(argv, partial, signal.SIGTERM, epochs_done=2, written="backup/chief/checkpoint")
    assert status == 143, err[-2000:]
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"interrupted (SIGTERM): the unfinished run is kept in {partial} (")
    assert last.endswith(f"; resume it with: {python_shown()} {' '.join(argv)} --resume")
    assert (partial / "backup").is_dir() and (partial / "sentencepiece.model").is_file()


CHILD_STOPPED = textwrap.dedent(
    """
    import sys, time
    from core.cli import Command
    from core.processes import run_command

    child = "import signal, sys, time; signal.signal(signal.SIGTERM, lambda *a: sys.exit('child stopped')); "
    child += "print('child running', flush=True); time.sleep(60)"
    work = lambda: run_command([sys.executable, "-c", child], log=sys.argv[1])
    Command("python -m demo", "Starts a child.", (), work, kept="nothing").main([])
    """
)


@pytest.mark.slow
def test_sigterm_stops_the_commands_children_and_ends_in_one_line(tmp_path: Path) -> None:
    log = tmp_path / "child.log"
    process = subprocess.Popen(
        [sys.executable, "-c", CHILD_STOPPED, str(log)], cwd=ROOT, env=environment(), stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    while not (log.is_file() and "child running" in log.read_text()) and time.monotonic() < deadline:
        time.sleep(0.1)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 143
    assert err.strip().splitlines() == [f"interrupted (SIGTERM): nothing; run the command again: {python_shown()} -c"]
    assert log.read_text().splitlines() == ["child running", "child stopped"]
