"""Sweeps shared through an Optuna study: claims that never train a trial twice, a silent trial retried in its slot,
a pruned trial stopped at its validation, and several `compare run --tune` processes on one journal file or one
PostgreSQL server finishing exactly N trials together."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState

from compare.run.tuning import side_record
from compare.tune import study as sweeps
from compare.tune.sampling import make_sampler
from compare.tune.study import Outcome, Sweep, open_study, slot_of
from core.studies import make_pruner
from tests.compare.fakes import tiny_data

ROOT = Path(__file__).resolve().parents[3]
WORKER_SECONDS = 600  # a worker's whole run; one took over 240 s on the 2-core machine at load 12


def sweep(storage: Path | str, n: int, name: str = "t/tune-scratch", pruner: str = "none") -> Sweep:
    return Sweep(open_study(str(storage), name, make_sampler("random", 0), make_pruner(pruner)), n)


def complete(trial: optuna.Trial) -> Outcome:
    return Outcome(TrialState.COMPLETE, trial.suggest_float("x", 0.0, 1.0), {})


def test_two_processes_asking_at_once_claim_n_trials_and_no_more(tmp_path: Path) -> None:
    first, second = sweep(tmp_path / "s.journal", 3), sweep(tmp_path / "s.journal", 3)
    a, b = first.claim(), second.claim()
    c = first.claim()
    assert sorted(t.number for t in (a, b, c)) == [0, 1, 2]
    assert second.claim() is None  # the three slots are taken, though none has finished
    for claimed, owner in ((a, first), (b, second), (c, first)):
        owner.train(claimed, complete)
    assert first.done() and second.done() and first.claim() is None
    assert len(first.study.get_trials(states=(TrialState.COMPLETE,))) == 3


def test_a_late_claim_finds_the_last_slot_taken_and_gives_its_trial_up(tmp_path: Path) -> None:
    first, second = sweep(tmp_path / "s.journal", 2), sweep(tmp_path / "s.journal", 2)
    first.claim()
    # Both processes saw one free slot; the first takes it, the second's ask comes after and is surplus.
    taken = first.study.ask()
    assert second.slots() and len(second.slots()) == 2
    late = second.study.ask()
    assert late.number > taken.number
    surplus = second.frozen(late.number)
    earlier = {slot_of(t) for t in second.trials() if t.number < late.number}
    assert len(earlier) == 2  # what `claim` checks after its ask: this one would make three
    assert second.claim() is None  # a claim now finds every slot taken (the running ones too)
    assert surplus.state == TrialState.RUNNING


def test_a_silent_trial_is_failed_and_retried_in_its_own_slot(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(sweeps, "GRACE_SECONDS", 0.5)
    gone, alive = sweep(tmp_path / "s.journal", 2), sweep(tmp_path / "s.journal", 2)
    lost = gone.claim()  # its process dies before it beats or finishes
    x = lost.suggest_float("x", 0.0, 1.0)
    time.sleep(0.6)
    retry = alive.claim()
    assert gone.frozen(lost.number).state == TrialState.FAIL
    assert slot_of(alive.frozen(retry.number)) == lost.number and retry.number != lost.number
    assert retry.suggest_float("x", 0.0, 1.0) == x  # the same parameters, so the same run directory
    alive.train(retry, complete)
    alive.train(alive.claim(), complete)
    assert alive.done() and sorted(alive.slots()) == [0, 2]  # slots by first trial: 1 was the retry
    assert [alive.index(alive.frozen(n)) for n in (0, 1, 2)] == [0, 0, 1]  # trial-000 twice, then trial-001


@pytest.mark.slow
def test_a_pruned_trial_stops_at_its_validation_and_is_recorded_pruned(tmp_path: Path, monkeypatch) -> None:
    from core.record import read_run
    from core.training.pruning import TRIAL_ENV
    from tests.scratch.tiny import train_tiny_run

    storage, name = tmp_path / "s.journal", "t/tune-scratch"
    study = sweep(storage, 6, name, pruner="median")
    for _ in range(5):  # five earlier trials, each better at every validation than any accuracy can be
        study.study.add_trial(
            optuna.create_trial(value=1.0, intermediate_values={1: 1.0, 2: 1.0, 3: 1.0, 4: 1.0}, user_attrs={})
        )
    trial = study.claim()
    monkeypatch.setenv(
        TRIAL_ENV, json.dumps({"storage": str(storage), "study": name, "trial": trial.number, "pruner": "median"})
    )
    run_dir = tmp_path / "runs" / "tune" / "scratch" / "trial-005"

    def train(claimed: optuna.Trial) -> Outcome:
        claimed.suggest_categorical("max_steps", (40,))
        record = read_run(train_tiny_run(run_dir, tmp_path / "train.csv", max_steps=40, eval_steps=10))
        state = TrialState.PRUNED if record.training.stop_reason == "pruned" else TrialState.COMPLETE
        attrs = {"metric": "accuracy", "validation": record.validation["accuracy"], "steps": record.training.steps}
        return Outcome(state, record.validation["accuracy"], attrs)

    study.train(trial, train)
    record = read_run(run_dir)
    assert record.training.stop_reason == "pruned" and record.training.steps == 10  # its first validation
    frozen = study.frozen(trial.number)
    assert frozen.state == TrialState.PRUNED and list(frozen.intermediate_values) == [1]
    section = side_record(study, tmp_path, "scratch", "random")  # what results.json `tuning.scratch` holds
    pruned = section["trials"][5]
    assert pruned["state"] == "pruned" and pruned["pruned_at"] == 1 and pruned["steps"] == 10
    assert section["selected"] != 5 and section["pruned"] == 1 and section["saved_steps"] == 30


def start_worker(tmp_path: Path, data, storage: str, seconds: float, grace: float = 30, tune: int = 4):
    config = {
        "train_file": data.train_file,
        "validation_file": data.validation_file,
        "test_file": data.test_file,
        "output_dir": str(tmp_path / "out"),
        "storage": storage,
        "tune": tune,
        "seconds": seconds,
        "grace": grace,
        "trainings": str(tmp_path / "trainings.jsonl"),
    }
    env = {**os.environ, "TF_USE_LEGACY_KERAS": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "tests.compare.tune.sweep_worker", json.dumps(config)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def events(tmp_path: Path) -> list[dict]:
    path = tmp_path / "trainings.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def finish(worker: subprocess.Popen) -> str:
    try:
        output, _ = worker.communicate(timeout=WORKER_SECONDS)
    except subprocess.TimeoutExpired:
        worker.kill()
        output, _ = worker.communicate()
        raise AssertionError(f"the worker did not end within {WORKER_SECONDS} s:\n{output[-3000:]}") from None
    assert worker.returncode == 0, output[-3000:]
    return output


def check_shared_sweep(tmp_path: Path, storage: str, pids: list[int]) -> None:
    """Exactly 4 trials trained once each, each process training at least one, and one report."""
    trained = [e for e in events(tmp_path) if e["event"] == "end"]
    trials = [e["run"] for e in trained if "/tune/scratch/" in e["run"]]
    assert sorted(Path(run).name for run in trials) == [f"trial-{i:03d}" for i in range(4)]  # none twice
    assert {e["pid"] for e in trained if e["run"] in trials} == set(pids)  # each process trained at least one
    assert [Path(e["run"]).name for e in trained if e not in [t for t in trained if t["run"] in trials]] == ["finetune"]
    reports = [e["pid"] for e in events(tmp_path) if e["event"] == "report"]
    assert len(reports) == 1 and (tmp_path / "out" / "report.html").is_file()
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    study = optuna.load_study(
        study_name=results["tuning"]["study"]["studies"]["scratch"], storage=sweep_storage(storage)
    )
    assert len(study.get_trials(states=(TrialState.COMPLETE,))) == 4
    assert results["tuning"]["study"]["storage"] == storage.replace("secret", "***")


def sweep_storage(storage: str):
    from core.studies import open_storage

    return open_storage(storage)


@pytest.mark.slow
def test_two_workers_on_one_journal_file_finish_exactly_n_trials_together(tmp_path: Path) -> None:
    data = tiny_data(tmp_path / "data")
    storage = str(tmp_path / "out" / "runs" / "tuning.journal")
    workers = [start_worker(tmp_path, data, storage, seconds=2.0) for _ in range(2)]
    for worker in workers:
        finish(worker)
    check_shared_sweep(tmp_path, storage, [w.pid for w in workers])


@pytest.mark.slow
def test_a_worker_killed_mid_trial_leaves_a_trial_the_other_retries(tmp_path: Path) -> None:
    data = tiny_data(tmp_path / "data")
    storage = str(tmp_path / "out" / "runs" / "tuning.journal")
    killed = start_worker(tmp_path, data, storage, seconds=120.0, tune=2)
    deadline = time.monotonic() + 120
    while not any(e["event"] == "start" for e in events(tmp_path)):
        assert time.monotonic() < deadline and killed.poll() is None, "the first worker never started a trial"
        time.sleep(0.2)
    other = start_worker(tmp_path, data, storage, seconds=0.5, grace=3, tune=2)
    killed.send_signal(signal.SIGKILL)
    killed.communicate()
    finish(other)
    started = [e for e in events(tmp_path) if e["event"] == "start"]
    first = started[0]
    assert first["pid"] == killed.pid
    retried = [e for e in events(tmp_path) if e["event"] == "end" and e["run"] == first["run"]]
    assert [e["pid"] for e in retried] == [other.pid]  # the killed worker's trial, trained by the other
    study = optuna.load_study(study_name="out/tune-scratch", storage=sweep_storage(storage))
    states = [t.state for t in study.get_trials()]
    assert states.count(TrialState.COMPLETE) == 2 and states.count(TrialState.FAIL) == 1
    assert any(slot_of(t) == 0 and t.number != 0 for t in study.get_trials(states=(TrialState.COMPLETE,)))


@pytest.mark.slow
def test_two_workers_on_one_postgresql_server_finish_exactly_n_trials_together(tmp_path: Path, postgresql) -> None:
    data = tiny_data(tmp_path / "data")
    workers = [start_worker(tmp_path, data, postgresql, seconds=2.0) for _ in range(2)]
    for worker in workers:
        finish(worker)
    check_shared_sweep(tmp_path, postgresql, [w.pid for w in workers])
