"""`compare run --tune N` with the sides' commands replaced by a stand-in that writes a finished run: the trials'
flags, selection on validation accuracy only, results.json `tuning`, the report's tables, and reuse on a rerun."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import shutil
from pathlib import Path

import numpy as np
import optuna
import pytest

from compare.run import launch
from compare.run.command import CompareRunArguments, run_comparison
from compare.run.profiles import get_profile
from compare.scoring.statistics import StatisticsArguments
from compare.tune import sample_trials, trial_flags, trial_name
from core.studies import open_storage
from demo import report_view
from tests.compare.fakes import fake_loader, fake_run, multilabel_data, tiny_data

STATS = StatisticsArguments(bootstrap_resamples=200)


def validation_accuracy(side: str, learning_rate: float) -> float:
    """What a stand-in trial scores on validation: best near a learning rate that differs per side."""
    best = {"finetune": 5e-5, "scratch": 1e-3}[side]
    return 0.9 - 0.1 * abs(math.log10(learning_rate / best))


class FakeSides:
    """Stands in for `python -m <side>`: records each command and writes the run it would have trained."""

    def __init__(self, data, metric: str = "accuracy") -> None:
        self.data, self.calls, self.metric = data, [], metric

    def __call__(self, cmd: list[str], log: Path | None = None, **options) -> None:
        side, run_dir = cmd[2], Path(cmd[cmd.index("--output-dir") + 1])
        flags = cmd[cmd.index("--overwrite") + 1 :]
        options = dict(zip(flags[::2], flags[1::2]))  # the last of a repeated flag wins, as in argparse
        untuned = {"finetune": "5e-05", "scratch": "1e-3"}[side]  # a side's profile run, not a trial
        accuracy = validation_accuracy(side, float(options.get("--learning-rate", untuned)))
        seed = int(cmd[cmd.index("--seed") + 1])
        shutil.rmtree(run_dir, ignore_errors=True)
        fake_run(run_dir, side, dataclasses.replace(self.data, seed=seed), validation={self.metric: accuracy})
        self.calls.append((side, run_dir.name, flags))


@pytest.fixture
def setup(tmp_path: Path, monkeypatch):
    data = tiny_data(tmp_path / "data")
    sides = FakeSides(data)
    monkeypatch.setattr(launch, "run_command", sides)
    loaded = []
    answer = fake_loader(
        {trial_name(i): 0.7 for i in range(4)} | {f"{trial_name(i)}-seed43": 0.7 for i in range(4)}, data
    )

    def loader(path, name=None):
        loaded.append(Path(path))
        return answer(path, name)

    return data, sides, loaded, loader, tmp_path / "out"


def tune(data, out: Path, loader, n: int, **kwargs) -> dict:
    args = CompareRunArguments(
        output_dir=str(out), tune=n, class_weight="balanced", scratch_args="--preset tiny", **kwargs
    )
    return run_comparison(data, args, STATS, loader=loader)


def brute_force_expected_max(values: list[float], n: int) -> float:
    """E[max of n draws with replacement], by enumerating every equally likely draw."""
    draws = list(itertools.product(values, repeat=n))
    return sum(max(d) for d in draws) / len(draws)


def test_trials_are_chosen_on_validation_and_recorded(setup) -> None:
    data, sides, loaded, loader, out = setup
    results = tune(data, out, loader, 3)
    for side in ("finetune", "scratch"):
        trials = sample_trials(side, 3, seed=data.seed, profile="quick")  # the profile CompareRunArguments defaults to
        record = results["tuning"][side]
        accuracies = [validation_accuracy(side, t["learning_rate"]) for t in trials]
        assert [t["params"] for t in record["trials"]] == trials
        assert [t["validation_accuracy"] for t in record["trials"]] == pytest.approx(accuracies)
        assert record["selected"] == int(np.argmax(accuracies))
        assert record["expected_max_validation"] == pytest.approx(
            [brute_force_expected_max(accuracies, n) for n in (1, 2, 3)]
        )
        runs = [str(out / "runs" / "tune" / side / trial_name(i)) for i in range(3)]
        assert [t["run"] for t in record["trials"]] == runs
        assert results["runs"][side] == runs[record["selected"]]  # the chosen trial is the side's model
        calls = [flags for called, _, flags in sides.calls if called == side]
        for flags, trial in zip(calls, trials):
            assert flags[-len(trial_flags(trial)) :] == trial_flags(trial)  # the trial's values come last and win
            assert (
                "--min-steps" not in flags and flags.count("--max-steps") == 1
            )  # the trial's budget, not the profile's
            assert flags[flags.index("--class-weight") + 1] == "balanced"
        if get_profile("quick")[side].flags:
            assert all(
                flags[: len(get_profile("quick")[side].flags)] == list(get_profile("quick")[side].flags)
                for flags in calls
            )
    # Test (and, for the label audit, validation) scores are read for the chosen trials only: nothing else was loaded.
    assert set(loaded) == {Path(results["runs"]["finetune"]), Path(results["runs"]["scratch"])}
    saved = json.loads((out / "results.json").read_text())
    assert saved["tuning"] == json.loads(json.dumps(results["tuning"]))


def test_the_report_shows_the_expected_best_and_the_chosen_trials(setup) -> None:
    data, _, _, loader, out = setup
    results = tune(data, out, loader, 2)
    markdown, page = (out / "report.md").read_text(), (out / "report.html").read_text()
    shown = report_view.tuning(results)
    assert "### Tuning: expected best validation accuracy against the number of trials" in markdown
    for side in ("finetune", "scratch"):
        record = results["tuning"][side]
        chosen = record["selected"]
        test = f"{results['models'][side]['accuracy'] * 100:.1f}"
        chosen_row = next(line for line in shown.splitlines() if line.startswith(f"| {side} | {trial_name(chosen)} |"))
        assert chosen_row.endswith(f"| ✓ chosen | {test} |") and chosen_row in markdown
        other_row = next(
            line for line in shown.splitlines() if line.startswith(f"| {side} | {trial_name(1 - chosen)} |")
        )
        assert other_row.endswith("|  | – |")  # no test score for a trial that was not chosen
    best_of_two = [f"{results['tuning'][s]['expected_max_validation'][1] * 100:.1f}" for s in ("finetune", "scratch")]
    assert f"| 2 | {best_of_two[0]} | {best_of_two[1]} |" in markdown
    assert "Tuning: the trials" in page and "✓ chosen" in page
    assert (out / "tuning.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and "](tuning.png)" in markdown


def test_a_rerun_with_more_trials_reuses_the_finished_ones(setup) -> None:
    data, sides, _, loader, out = setup
    first = tune(data, out, loader, 2)
    assert sorted(name for _, name, _ in sides.calls) == ["trial-000", "trial-000", "trial-001", "trial-001"]
    sides.calls.clear()
    second = tune(data, out, loader, 3)
    assert [(side, name) for side, name, _ in sides.calls] == [("finetune", "trial-002"), ("scratch", "trial-002")]
    for side in ("finetune", "scratch"):
        assert second["tuning"][side]["trials"][:2] == first["tuning"][side]["trials"]
        assert len(second["tuning"][side]["expected_max_validation"]) == 3


def test_with_seeds_the_chosen_trial_is_trained_again_for_each_seed(setup) -> None:
    data, sides, _, _, out = setup
    loader = fake_loader({f"{trial_name(i)}{s}": 0.7 for i in range(2) for s in ("", "-seed43")}, data)
    results = tune(data, out, loader, 2, seeds=2)
    for side in ("finetune", "scratch"):
        chosen = results["tuning"][side]["trials"][results["tuning"][side]["selected"]]
        name = f"{trial_name(results['tuning'][side]['selected'])}-seed43"
        rerun = next(flags for called, run, flags in sides.calls if called == side and run == name)
        assert rerun[-len(trial_flags(chosen["params"])) :] == trial_flags(chosen["params"])
        assert results["seeds"][side]["seeds"] == [data.seed, data.seed + 1]
        assert results["seeds"][side]["runs"] == [chosen["run"], str(Path(chosen["run"]).with_name(name))]


def test_a_moved_tuned_report_still_finds_its_chosen_trials(setup, tmp_path: Path) -> None:
    from compare.report.locate import recorded_runs

    data, _, _, loader, out = setup
    results = tune(data, out, loader, 2)
    moved = shutil.move(out, tmp_path / "moved")
    found = recorded_runs(Path(moved))
    for side in ("finetune", "scratch"):
        assert found[side] == Path(moved) / "runs" / "tune" / side / Path(results["runs"][side]).name


def test_a_trial_whose_flags_its_side_would_refuse_stops_the_tuning_before_any_trial_trains(
    tmp_path, monkeypatch, capsys
):
    from compare.run import command, launch

    def no_training(*args, **kwargs):
        raise AssertionError("trained despite a trial its side would refuse")

    monkeypatch.setattr(launch, "run_command", no_training)
    drawn = [p["max_steps"] for p in sample_trials("scratch", 3, seed=42, profile="quick")]
    assert min(drawn) < 1500  # a drawn training length shorter than the user's minimum
    from tests.conftest import separable_rows, write_csv

    train = write_csv(tmp_path / "train.csv", separable_rows(40))
    argv = ["--train-file", str(train), "--output-dir", str(tmp_path / "out"), "--tune", "3"]
    argv.append("--scratch-args=--min-steps 1500")
    with pytest.raises(SystemExit) as exit_:
        command.main(argv)
    assert exit_.value.code == 2
    first = trial_name(next(i for i, steps in enumerate(drawn) if steps < 1500))
    err = capsys.readouterr().err
    assert err.startswith(f"error: --tune: scratch {first}: python -m scratch would refuse") and err.count("\n") == 1
    assert "--min-steps 1500 is more than --max-steps" in err
    assert not (tmp_path / "out").exists()


def test_a_multilabel_task_is_tuned_on_its_validation_macro_f1(tmp_path: Path, monkeypatch) -> None:
    data = multilabel_data(tmp_path / "data")
    monkeypatch.setattr(launch, "run_command", FakeSides(data, metric="macro_f1"))
    loader = fake_loader({trial_name(i): 0.8 for i in range(3)}, data)
    args = CompareRunArguments(output_dir=str(tmp_path / "out"), tune=3, scratch_args="--preset tiny")
    results = run_comparison(data, args, STATS, loader=loader)
    for side in ("finetune", "scratch"):
        trials = sample_trials(side, 3, seed=data.seed, profile="quick")
        scores = [validation_accuracy(side, t["learning_rate"]) for t in trials]
        record = results["tuning"][side]
        assert record["metric"] == "macro_f1" and record["selected"] == int(np.argmax(scores))
        assert [t["validation_macro_f1"] for t in record["trials"]] == pytest.approx(scores)
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert "### Tuning: expected best validation macro-F1 against the number of trials" in markdown
    assert (
        "| model | trial | state | parameters | validation macro-F1 % | steps | seconds | chosen | test macro-F1 % |"
        in markdown
    )


def refused(argv: list[str], capsys) -> str:
    """The one `error:` line `compare run argv` ends with, once it has exited with status 2."""
    from compare.run import command

    with pytest.raises(SystemExit) as exit_:
        command.main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err


def data_argv(data) -> list[str]:
    return ["--train-file", data.train_file, "--validation-file", data.validation_file, "--test-file", data.test_file]


def test_a_storage_that_cannot_be_reached_is_refused_naming_it_without_its_password(setup, capsys) -> None:
    data, _, _, _, out = setup
    url = "postgresql://me:secret@127.0.0.1:1/sweeps"
    err = refused([*data_argv(data), "--output-dir", str(out), "--tune", "2", "--tune-storage", url], capsys)
    assert "--tune-storage postgresql://me:***@127.0.0.1:1/sweeps cannot be opened" in err and "secret" not in err


def test_a_study_of_other_data_in_the_same_storage_is_refused(setup, tmp_path: Path, capsys) -> None:
    data, _, _, loader, out = setup
    storage = str(tmp_path / "shared.journal")
    tune(data, out, loader, 1, tune_storage=storage, tune_study="sweep")
    other = tiny_data(tmp_path / "other", n_test=100)  # another test split: other data
    argv = [*data_argv(other), "--output-dir", str(tmp_path / "out2"), "--tune", "1"]
    err = refused([*argv, "--tune-storage", storage, "--tune-study", "sweep"], capsys)
    assert "the study 'sweep/tune-finetune' in --tune-storage holds trials of other data" in err
    assert "give another --tune-study name or another --tune-storage" in err


def test_a_misspelt_sampler_is_refused_with_the_choices(setup, capsys) -> None:
    data, _, _, _, out = setup
    err = refused([*data_argv(data), "--output-dir", str(out), "--tune", "2", "--tune-sampler", "tpee"], capsys)
    assert "--tune-sampler" in err and "'tpee'" in err and "random" in err and "tpe" in err


def test_tune_sides_tunes_one_side_and_claims_the_other_sides_run_through_a_study(setup) -> None:
    data, sides, _, _, out = setup
    loader = fake_loader({trial_name(i): 0.7 for i in range(3)} | {"finetune": 0.7}, data)
    results = tune(data, out, loader, 3, tune_sides="scratch")
    assert list(results["tuning"]) == ["study", "scratch"]
    assert sorted(name for side, name, _ in sides.calls if side == "finetune") == ["finetune"]  # the profile's run
    study = results["tuning"]["study"]
    assert study["storage"] == str(out / "runs" / "tuning.journal")
    assert study["studies"]["scratch"] == "out/tune-scratch" and study["studies"]["runs"].startswith("out/runs-")
    found = optuna.load_study(study_name=study["studies"]["scratch"], storage=open_storage(study["storage"]))
    assert [t.params for t in found.trials] == [t["params"] for t in results["tuning"]["scratch"]["trials"]]
    assert [t.value for t in found.trials] == [t["validation_accuracy"] for t in results["tuning"]["scratch"]["trials"]]


def test_a_pruned_trial_shows_in_results_json_and_the_report_and_is_not_chosen(setup, monkeypatch) -> None:
    data, _, _, _, out = setup

    class PruningSides(FakeSides):
        def __call__(self, cmd, log=None, **options):
            super().__call__(cmd, log, **options)
            run_dir = Path(cmd[cmd.index("--output-dir") + 1])
            if run_dir.name == "trial-001":  # as the side writes a run its study pruned at its first validation
                record = json.loads((run_dir / "run.json").read_text())
                record["training"] |= {"stop_reason": "pruned", "steps": 250}
                record["validation"]["accuracy"] = 0.99  # better than any completed trial, yet cut short
                (run_dir / "run.json").write_text(json.dumps(record))

    monkeypatch.setattr(launch, "run_command", PruningSides(data))
    loader = fake_loader({trial_name(i): 0.7 for i in range(3)} | {"finetune": 0.7}, data)
    results = tune(data, out, loader, 3, tune_sides="scratch")
    record = results["tuning"]["scratch"]
    assert [t["state"] for t in record["trials"]] == ["complete", "pruned", "complete"]
    assert record["selected"] != 1 and record["pruned"] == 1
    assert record["saved_steps"] == record["trials"][1]["params"]["max_steps"] - 250
    found = optuna.load_study(study_name="out/tune-scratch", storage=open_storage(str(out / "runs" / "tuning.journal")))
    assert found.trials[1].state == optuna.trial.TrialState.PRUNED
    markdown = (out / "report.md").read_text()
    assert "| scratch | trial-001 | pruned |" in markdown and "1 trial(s) pruned" in markdown


def test_with_tpe_the_report_leaves_the_expected_best_out_and_says_why(setup) -> None:
    data, _, _, _, out = setup
    loader = fake_loader({trial_name(i): 0.7 for i in range(3)} | {"finetune": 0.7}, data)
    results = tune(data, out, loader, 3, tune_sides="scratch", tune_sampler="tpe")
    assert results["tuning"]["study"]["sampler"] == "tpe"
    assert results["tuning"]["scratch"]["expected_max_validation"] is None
    markdown = (out / "report.md").read_text()
    assert "expected best validation accuracy against the number of trials" not in markdown
    assert "TPE drew each trial from the ones before it" in markdown
