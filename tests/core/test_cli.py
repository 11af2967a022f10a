"""Both sides' command lines: expected errors are one `error:` line and exit status 2, never a traceback."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from core.cli import run_command
from core.data import DataError
from tests.conftest import ROOT, separable_rows, write_csv
from tests.core.bad_inputs import CASES, as_flags

SIDES = ("finetune", "scratch")


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.finetune.tiny import make_tiny_bert

    return make_tiny_bert(tmp_path_factory.mktemp("cli") / "tiny-bert")


def side_main(side: str):
    if side == "finetune":
        from finetune.__main__ import main
    else:
        from scratch.__main__ import main
    return main


def side_flags(side: str, tiny_bert: Path) -> list[str]:
    model = ["--model", str(tiny_bert)] if side == "finetune" else ["--preset", "tiny"]
    return [*model, "--max-length", "16"]


def expect_one_error_line(capsys: pytest.CaptureFixture, main, argv: list[str], pattern: str) -> str:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert re.search(pattern, lines[0]), lines[0]
    return lines[0]


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
@pytest.mark.parametrize("side", SIDES)
def test_bad_data_through_the_command_line(side, case, tmp_path, tiny_bert, capsys) -> None:
    options, message = case(tmp_path)
    output = tmp_path / "run"
    argv = [*as_flags(options), "--output-dir", str(output), *side_flags(side, tiny_bert)]
    expect_one_error_line(capsys, side_main(side), argv, message)
    assert not output.exists() and not output.with_name("run.partial").exists()


@pytest.mark.parametrize("side", SIDES)
def test_a_refused_output_directory_and_an_unknown_option(side, tmp_path, tiny_bert, capsys) -> None:
    train = write_csv(tmp_path / "train.csv", separable_rows(40))
    output = tmp_path / "run"
    output.mkdir()
    argv = ["--train-file", str(train), "--output-dir", str(output), *side_flags(side, tiny_bert)]
    expect_one_error_line(capsys, side_main(side), argv, r"run already exists\. Pass --overwrite")
    assert list(output.iterdir()) == [] and not output.with_name("run.partial").exists()
    expect_one_error_line(capsys, side_main(side), [*argv, "--no-such-flag"], r"unrecognized arguments: --no-such-flag")


def test_a_bad_checkpoint_is_one_error_line(tmp_path, capsys) -> None:
    from finetune.__main__ import main

    train = write_csv(tmp_path / "train.csv", separable_rows(40))
    argv = ["--train-file", str(train), "--output-dir", str(tmp_path / "run"), "--model", str(tmp_path / "no-model")]
    expect_one_error_line(capsys, main, argv, r"no-model: no such directory")
    (tmp_path / "empty-model").mkdir()
    expect_one_error_line(capsys, main, [*argv[:-1], str(tmp_path / "empty-model")], r"has no config\.json")


def test_other_errors_keep_their_traceback() -> None:
    def broken(*_):
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        run_command(["--train-file", "x.csv"], (_data_arguments(),), broken)


def test_a_user_error_in_train_is_one_line(capsys) -> None:
    def refuses(*_):
        raise DataError("x.csv: something is off;\nfix it.")

    with pytest.raises(SystemExit) as exit_:
        run_command(["--train-file", "x.csv"], (_data_arguments(),), refuses)
    assert exit_.value.code == 2
    assert capsys.readouterr().err == "error: x.csv: something is off; fix it.\n"


def _data_arguments():
    from core.args import DataArguments

    return DataArguments


QUIET = textwrap.dedent(
    """
    import sys
    from core.cli import quiet_tensorflow
    quiet_tensorflow(verbose=sys.argv[1] == "verbose")
    import tensorflow as tf
    print(float(tf.reduce_sum(tf.ones((2, 2)))))
    """
)


@pytest.mark.parametrize("verbose", [False, True])
def test_tensorflow_start_up_notices_only_when_verbose(verbose: bool) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("TF_CPP_MIN_LOG_LEVEL", None)
    done = subprocess.run(
        [sys.executable, "-c", QUIET, "verbose" if verbose else "quiet"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "4.0"
    if verbose:
        assert "oneDNN" in done.stderr or "cuda" in done.stderr.lower()
    else:
        assert done.stderr == ""


def test_a_side_s_command_prints_the_error_alone(tmp_path) -> None:
    """In a real process: no TensorFlow notice, no log line, no traceback; just the error."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "scratch", "--train-file", str(tmp_path / "nope.csv"), "--output-dir", str(tmp_path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2
    assert done.stderr == f"error: Data file {tmp_path / 'nope.csv'} does not exist.\n"


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--max-steps", "-5"], r"--max-steps must be at least 1, got -5"),
        (["--max-steps", "0"], r"--max-steps must be at least 1, got 0"),
        (["--min-steps", "-1"], r"--min-steps must be 0 or more, got -1"),
        (["--min-steps", "50", "--max-steps", "20"], r"--min-steps 50 is more than --max-steps 20"),
        (["--class-weight", "inverse"], r"--class-weight must be one of none, balanced, got 'inverse'"),
        (["--epochs", "0"], r"--epochs must be between 1 and 1000, got 0"),
    ],
)
@pytest.mark.parametrize("side", SIDES)
def test_bad_budgets_are_refused_before_training(side, flags, message, tmp_path, tiny_bert, capsys) -> None:
    train = write_csv(tmp_path / "train.csv", separable_rows(40))
    output = tmp_path / "run"
    argv = ["--train-file", str(train), "--output-dir", str(output), *side_flags(side, tiny_bert), *flags]
    expect_one_error_line(capsys, side_main(side), argv, message)
    assert not output.exists() and not output.with_name("run.partial").exists()
