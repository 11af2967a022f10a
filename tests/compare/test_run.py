from __future__ import annotations

from pathlib import Path

import pytest

from compare.run.command import CompareRunArguments, run_dirs
from compare.run.profiles import PROFILES, get_profile, side_data
from core import sides
from core.args import DataArguments
from core.sides import Budget


def test_profiles_are_budgets_in_steps_passes_and_minutes_on_the_whole_train_split() -> None:
    args = {name: CompareRunArguments(output_dir="x", profile=name) for name in PROFILES}
    assert args["quick"].side_flags("finetune") == [
        *("--min-steps", "0", "--epochs", "3", "--time-budget", "4"),
        *("--min-epochs", "1", "--evals-per-epoch", "3", "--eval-steps", "300", "--patience", "2"),
    ]
    assert args["quick"].side_flags("scratch") == [
        *("--min-steps", "800", "--max-steps", "2000", "--time-budget", "3"),
        *("--patience", "3", "--eval-steps", "250"),
    ]
    assert args["full"].side_flags("finetune") == [] and args["full"].side_flags("scratch") == []
    data = DataArguments(task="sst2", seed=42)
    for profile in PROFILES:
        for side in ("finetune", "scratch"):
            assert side_data(data, side, profile, 43) == DataArguments(task="sst2", seed=43)
    chosen = DataArguments(task="sst2", max_train_samples=500)
    assert side_data(chosen, "finetune", "quick", 42).max_train_samples == 500


def test_tuning_trials_drop_the_budget_but_keep_the_other_flags() -> None:
    args = CompareRunArguments(output_dir="x", scratch_args="--preset tiny", class_weight="balanced")
    assert args.side_flags("scratch", budget=False) == [
        *("--patience", "3", "--eval-steps", "250"),
        *("--class-weight", "balanced", "--preset", "tiny"),
    ]
    assert args.side_flags("finetune", budget=False) == [
        *("--min-epochs", "1", "--evals-per-epoch", "3", "--eval-steps", "300", "--patience", "2"),
        *("--class-weight", "balanced"),
    ]
    budget = get_profile("quick")["scratch"].budget
    assert args.side_flags("scratch")[:4] == [
        "--min-steps",
        str(budget.min_steps),
        "--max-steps",
        str(budget.max_steps),
    ]
    with pytest.raises(ValueError, match="min_steps <= max_steps; got 10 and 5"):
        Budget(min_steps=10, max_steps=5)


@pytest.mark.parametrize("side", ["finetune", "scratch"])
def test_the_side_parses_the_quick_profile_into_its_budget(side: str) -> None:
    from core.args import RunArguments
    from core.parsing import parse_args

    arguments = sides.get(side).options()
    flags = CompareRunArguments(output_dir="x", profile="quick").side_flags(side)
    *_, parsed = parse_args((DataArguments, RunArguments, arguments), ["--task", "sst2", "--output-dir", "u", *flags])
    budget = get_profile("quick")[side].budget
    assert (parsed.min_steps, parsed.max_steps) == (budget.min_steps, budget.max_steps)
    assert (parsed.time_budget, parsed.epochs) == (budget.minutes, budget.passes)


def test_a_user_s_step_bound_lifts_the_profile_s_pass_cap_and_a_user_s_clock_wins() -> None:
    from core.args import RunArguments
    from core.parsing import parse_args

    args = CompareRunArguments(output_dir="x", finetune_args="--max-steps 2000 --time-budget 20")
    flags = args.side_flags("finetune")
    *_, parsed = parse_args(
        (DataArguments, RunArguments, sides.get("finetune").options()), ["--task", "sst2", "--output-dir", "u", *flags]
    )
    assert (parsed.max_steps, parsed.epochs, parsed.time_budget) == (2000, None, 20.0)
    assert parsed.plan(steps_per_epoch=1357).total_steps == 2000  # more than the profile's one pass
    kept = CompareRunArguments(output_dir="x", finetune_args="--max-steps 2000 --epochs 1").side_flags("finetune")
    assert kept.count("--epochs") == 2  # the user's own pass cap stays, after the profile's


def test_extra_flags_follow_the_profile() -> None:
    args = CompareRunArguments(
        output_dir="x", profile="full", finetune_args="--epochs 3 --batch-size 8", scratch_args="--preset tiny"
    )
    assert args.side_flags("finetune") == ["--epochs", "3", "--batch-size", "8"]
    assert args.side_flags("scratch") == ["--preset", "tiny"]
    weighted = CompareRunArguments(output_dir="x", profile="full", class_weight="none", scratch_args="--preset tiny")
    assert weighted.side_flags("scratch") == ["--class-weight", "none", "--preset", "tiny"]
    assert weighted.side_flags("finetune") == ["--class-weight", "none"]
    with pytest.raises(ValueError, match="Unknown profile 'fast'"):
        CompareRunArguments(output_dir="x", profile="fast")
    with pytest.raises(ValueError, match="--scratch-args cannot be split"):
        CompareRunArguments(output_dir="x", scratch_args='--preset "tiny')


def parse_run(*flags: str) -> CompareRunArguments:
    from compare.commands import RUN

    _, (_, args, _) = RUN.parse(["--task", "sst2", "--output-dir", "x", "--profile", "full", *flags])
    return args


def test_side_args_give_each_side_its_flags_as_its_own_option_does() -> None:
    generic = parse_run("--side-args", "finetune=--epochs 3 --batch-size 8", "--side-args", "scratch=--preset tiny")
    own = parse_run("--finetune-args", "--epochs 3 --batch-size 8", "--scratch-args", "--preset tiny")
    one = parse_run("--side-args", "finetune=--epochs 3 --batch-size 8", "scratch=--preset tiny")
    for args in (generic, own, one):
        assert args.side_flags("finetune") == ["--epochs", "3", "--batch-size", "8"]
        assert args.side_flags("scratch") == ["--preset", "tiny"]
    assert generic.origin("scratch") == "--side-args scratch"
    assert own.origin("scratch") == "--scratch-args"


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            ["--side-args", "bert=--epochs 2"],
            "--side-args names the side 'bert'; the sides are finetune, scratch, scratch-pretrained.",
        ),
        (["--side-args", "--epochs 2"], 'takes NAME="FLAGS", e.g. finetune="--epochs 2"; got \'--epochs 2\''),
        (
            ["--side-args", "scratch=--preset tiny", "--scratch-args", "--epochs 2"],
            "--side-args scratch and --scratch-args both give scratch's flags; give them once",
        ),
        (["--side-args", 'scratch=--preset "tiny'], "--side-args scratch cannot be split into flags"),
    ],
)
def test_bad_side_args_are_refused_naming_the_option(flags, message) -> None:
    from core.errors import UserError

    with pytest.raises(UserError) as error:
        parse_run(*flags)
    assert message in str(error.value)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--tune", "0"], "--tune must be a positive number of trials per side, got 0"),
        (["--tune", "-3"], "--tune must be a positive number of trials per side, got -3"),
        (
            ["--class-weight", "inverse"],
            "argument --class-weight: invalid choice: 'inverse' (choose from 'none', 'balanced')",
        ),
        (
            ["--finetune-args", "--learning-rate 1"],
            "python -m finetune would refuse --min-steps 0 --epochs 3 --time-budget 4 --min-epochs 1 --evals-per-epoch 3 --eval-steps 300 --patience 2 "
            "--learning-rate 1 (the quick profile's --min-steps 0 --epochs 3 --time-budget 4 --min-epochs 1 --evals-per-epoch 3 --eval-steps 300 --patience 2, "
            "then --finetune-args): --learning-rate must be in (0, 0.01], got 1.0",
        ),
        (["--scratch-args", "--epochs 2 --no-such-flag"], "unrecognized arguments: --no-such-flag"),
        (
            ["--scratch-args=--epochs 2 --max-train-samples=100"],
            "--scratch-args holds --max-train-samples, a data option: give it to this command itself",
        ),
        (["--tune", "2", "--finetune-args", "--learning-rate 1"], "--learning-rate must be in (0, 0.01]"),
    ],
)
def test_bad_tuning_or_class_weight_is_refused_before_any_training(flags, message, tmp_path, monkeypatch, capsys):
    err = refusal(["--task", "sst2", "--output-dir", str(tmp_path / "out"), *flags], monkeypatch, capsys)
    assert message in err, err
    assert not (tmp_path / "out").exists()


def refusal(argv: list[str], monkeypatch, capsys) -> str:
    """The one `error:` line `compare run` refuses `argv` with (exit status 2), no side having started."""
    from compare.run import command, launch

    def no_training(*args, **kwargs):
        raise AssertionError("trained despite a bad option")

    monkeypatch.setattr(launch, "run_command", no_training)
    monkeypatch.setattr(command, "train_side", no_training)
    with pytest.raises(SystemExit) as exit_:
        command.main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err


def test_run_directories_name_seeds_only_when_there_are_several(tmp_path: Path) -> None:
    assert run_dirs(tmp_path, [42]) == {
        ("finetune", 42): tmp_path / "runs/finetune",
        ("scratch", 42): tmp_path / "runs/scratch",
    }
    dirs = run_dirs(tmp_path, [42, 43])
    assert dirs[("scratch", 43)] == tmp_path / "runs/scratch-seed43" and len(dirs) == 4


def test_tensorflow_notices_stay_quiet_unless_verbose(capsys) -> None:
    """The level `python -m compare` sets before TensorFlow loads; core.processes hands it to the sides."""
    import os
    import subprocess
    import sys

    from compare.__main__ import main

    probe = "import os, compare; print(os.environ['TF_CPP_MIN_LOG_LEVEL'])"
    env = {key: value for key, value in os.environ.items() if key != "TF_CPP_MIN_LOG_LEVEL"}
    for flags, level in (([], "2"), (["report", "--verbose"], "0")):
        done = subprocess.run([sys.executable, "-c", probe, *flags], capture_output=True, text=True, env=env)
        assert done.stdout.strip() == level, done.stderr[-500:]
    assert main(["--verbose"]) == 2 and "usage: python -m compare" in capsys.readouterr().err


def test_a_step_bound_of_the_user_moves_the_profile_budget_to_fit_it() -> None:
    from finetune.__main__ import TRAIN

    shorter = CompareRunArguments(output_dir="x", profile="quick", finetune_args="--max-steps 20")
    flags = shorter.side_flags("finetune")
    assert flags == [
        "--min-steps",
        "0",
        "--time-budget",
        "4",
        *("--min-epochs", "1", "--evals-per-epoch", "3", "--eval-steps", "300", "--patience", "2"),
        "--max-steps",
        "20",
    ]
    *_, parsed = TRAIN.parse(["--task", "sst2", "--output-dir", "u", *flags])[1]
    assert (parsed.min_steps, parsed.max_steps) == (0, 20)
    assert (parsed.per_pass(2100).min_steps, parsed.per_pass(2100).eval_steps) == (20, 300)  # one pass, cut to 20
    longer = CompareRunArguments(output_dir="x", profile="quick", scratch_args="--min-steps=3000")
    assert longer.side_flags("scratch")[:4] == ["--min-steps", "800", "--max-steps", "3000"]
    within = CompareRunArguments(output_dir="x", profile="quick", scratch_args="--max-steps 1000")
    assert within.side_flags("scratch")[:4] == ["--min-steps", "800", "--max-steps", "2000"]


def test_a_profile_setting_a_side_refuses_is_named_with_where_it_came_from(tmp_path, capsys) -> None:
    from compare.run import command

    flags = ["--finetune-args", "--min-steps 50 --max-steps 20"]
    with pytest.raises(SystemExit) as exit_:
        command.main(["--task", "sst2", "--output-dir", str(tmp_path / "out"), *flags])
    assert exit_.value.code == 2
    assert capsys.readouterr().err == (
        "error: python -m finetune would refuse --min-steps 0 --time-budget 4 --min-epochs 1 --evals-per-epoch 3 "
        "--eval-steps 300 --patience 2 --min-steps 50 --max-steps 20 (the quick profile's --min-steps 0 --epochs 3 --time-budget 4 --min-epochs 1 --evals-per-epoch 3 --eval-steps 300 --patience 2, then --finetune-args): "
        "--min-steps 50 is more than --max-steps 20; the minimum must fit in the budget.\n"
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("kind", ["classification", "translation"])
def test_missing_data_is_refused_before_any_side_starts_and_leaves_nothing(kind, tmp_path, monkeypatch, capsys):
    from compare.run import launch
    from tests.conftest import separable_rows, write_csv

    def no_training(*args, **kwargs):
        raise AssertionError("a side started despite missing data")

    monkeypatch.setattr(launch, "run_command", no_training)
    train = write_csv(tmp_path / "train.csv", separable_rows(40))
    missing = tmp_path / "missing.csv"
    data = ["--train-file", str(train), "--test-file", str(missing)]
    if kind == "translation":
        data += ["--source-column", "text", "--target-column", "label"]
    with pytest.raises(SystemExit) as exit_:
        command_main(data + ["--output-dir", str(tmp_path / "out")])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and str(missing) in err, err
    assert not (tmp_path / "out").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["train.csv"]


def test_a_side_that_fails_while_working_is_exit_status_1(tmp_path, monkeypatch, capsys) -> None:
    from compare.run import launch
    from core.processes import ProcessError
    from tests.conftest import separable_rows, write_csv

    def fails(cmd, log=None, **kwargs):
        raise ProcessError(cmd, 1, "error: out of memory", log)

    monkeypatch.setattr(launch, "run_command", fails)
    train = write_csv(tmp_path / "train.csv", separable_rows(40))
    assert command_main(["--train-file", str(train), "--output-dir", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: ") and "out of memory" in err[-1]


def command_main(argv: list[str]):
    from compare.run import command

    return command.main(argv)


@pytest.mark.parametrize("problem", ["regression", "multi_label_classification"])
def test_a_class_weight_for_a_task_without_exclusive_classes_is_refused_before_any_training(
    problem, tmp_path, monkeypatch, capsys
) -> None:
    from compare.run import launch
    from tests.compare.fakes import multilabel_data, pair_regression_data

    def no_training(*args, **kwargs):
        raise AssertionError("a side started despite the class weight")

    monkeypatch.setattr(launch, "run_command", no_training)
    data = (pair_regression_data if problem == "regression" else multilabel_data)(tmp_path / "data")
    argv = ["--train-file", data.train_file, "--label-column", data.label_column, "--problem", problem]
    argv += ["--text-column", *data.text_column] if data.text_column else []
    argv += ["--text-pair-column", data.text_pair_column] if data.text_pair_column else []
    with pytest.raises(SystemExit) as exit_:
        command_main([*argv, "--class-weight", "balanced", "--output-dir", str(tmp_path / "out")])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --class-weight balanced weighs single-label classes") and err.count("\n") == 1
    assert f"({problem}); drop --class-weight" in err and not (tmp_path / "out").exists()


def parse_translation_run(*flags: str):
    from compare.commands import RUN

    kind, (_, args, *_) = RUN.parse(["--task", "pt_en", "--output-dir", "x", *flags])
    return kind, args


def test_a_translation_run_takes_the_scratch_side_s_flags_as_a_classification_run_does() -> None:
    from core.task_kinds import TRANSLATION

    quick = ["--preset", "small", "--max-steps", "1500"]  # the scratch side's quick profile under translation
    for spelled in (
        ("--side-args", "scratch=--preset tiny --max-steps 20"),
        ("--scratch-args", "--preset tiny --max-steps 20"),
    ):
        kind, args = parse_translation_run(*spelled)
        assert kind is TRANSLATION
        assert args.variants() == {"scratch": [*quick, "--preset", "tiny", "--max-steps", "20"]}
    assert parse_translation_run("--side-args", "scratch=--epochs 1")[1].spelling == {"scratch": "--side-args scratch"}
    assert parse_translation_run("--profile", "full", "--scratch-args", "--epochs 1")[1].variants()["scratch"] == [
        *("--preset", "base", "--epochs", "1")
    ]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            ["--finetune-args", "--epochs 2"],
            "--finetune-args gives flags to finetune, which a translation task does not train (its sides are scratch); leave them out.",
        ),
        (
            ["--side-args", "finetune=--epochs 2"],
            "--side-args finetune gives flags to finetune, which a translation task does not train (its sides are scratch); leave them out.",
        ),
        (
            ["--scratch-pretrained-args", "--epochs 2"],
            "--scratch-pretrained-args gives flags to scratch-pretrained, which a translation task does not train",
        ),
        (["--side-args", "bert=--epochs 2"], "--side-args names the side 'bert'; the sides are scratch."),
        (
            ["--scratch-args", "--epochs 2 --source-column pt"],
            "--scratch-args holds --source-column, a data option: give it to this command itself",
        ),
        (
            ["--side-args", "scratch=--epochs 2 --max-length=16"],
            "--side-args scratch holds --max-length, a data option",
        ),
        (
            ["--side-args", "scratch=--preset tiny", "--scratch-args", "--epochs 2"],
            "--side-args scratch and --scratch-args both give scratch's flags; give them once",
        ),
        (
            ["--scratch-args", "--epochs 2 --no-such-flag"],
            "python -m scratch would refuse --preset small --max-steps 1500 --epochs 2 --no-such-flag (the quick "
            "profile's --preset small --max-steps 1500, then --scratch-args for scratch): unrecognized arguments: "
            "--no-such-flag",
        ),
    ],
)
def test_a_translation_run_refuses_bad_side_flags_in_one_error_line(flags, message, tmp_path, monkeypatch, capsys):
    err = refusal(["--task", "pt_en", "--output-dir", str(tmp_path / "out"), *flags], monkeypatch, capsys)
    assert message in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "spelled", [("--side-args", "scratch=--preset tiny --epochs 1"), ("--scratch-args", "--preset tiny --epochs 1")]
)
def test_the_translator_s_command_line_carries_the_profile_then_the_user_s_flags(spelled, tmp_path, monkeypatch):
    """The command `compare run` starts for a translation task, built from its own command line (the side is stopped
    where it would start)."""
    import sys

    from compare.run import launch
    from core.processes import ProcessError
    from tests.scratch.translation.toy import toy_pairs, write_tsv

    started = []

    def stop(cmd, log=None, **kwargs):
        started.append(cmd)
        raise ProcessError(cmd, 1, "error: stopped by the test", log)

    monkeypatch.setattr(launch, "run_command", stop)
    train = write_tsv(tmp_path / "train.tsv", toy_pairs(40))
    data = ["--train-file", str(train), "--source-column", "pt", "--target-column", "en", "--max-length", "32"]
    assert command_main([*data, "--output-dir", str(tmp_path / "out"), "--decoder-only", *spelled]) == 1
    run_dir = tmp_path / "out" / "runs" / "scratch"
    expected = [sys.executable, "-m", "scratch", "--train-file", str(train), "--source-column", "pt"]
    assert started[0][: len(expected)] == expected
    assert started[0][started[0].index("--output-dir") :] == [
        *("--output-dir", str(run_dir), "--overwrite"),
        *("--preset", "small", "--max-steps", "1500", "--preset", "tiny", "--epochs", "1"),
    ]
    import json

    pending = json.loads(launch.pending_path(run_dir).read_text(encoding="utf-8"))
    assert pending["side"] == "scratch" and pending["defaults"]["arch"] == "encoder-decoder"  # the translator's options
