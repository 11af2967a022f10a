"""Every command line: its help, the options it refuses, options files, and the exit statuses (`core.cli`).

Expected errors are one `error:` line and exit status 2, never a traceback; a failure while working is status 1.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from core.args import OptionsError
from core.cli import Command
from core.data import DataError
from core.errors import WorkFailed
from core.task_kinds import TRANSLATION
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


# The command line refuses an unknown task itself, listing the tasks it knows.
ON_THE_COMMAND_LINE = {"unknown_task": r"argument --task: invalid choice: 'sst3' \(choose from 'sst2', 'emotion'"}


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("side", SIDES)
def test_bad_data_through_the_command_line(side, name, tmp_path, tiny_bert, capsys) -> None:
    options, message = CASES[name](tmp_path)
    message = ON_THE_COMMAND_LINE.get(name, message)
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


def command(work) -> Command:
    from core.args import DataArguments

    return Command(prog="python -m probe", description="A probe.", arguments=(DataArguments,), work=work)


def test_other_errors_keep_their_traceback() -> None:
    def broken(*_):
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        command(broken).main(["--train-file", "x.csv"])


def test_a_user_error_in_the_work_is_one_line_and_status_2(capsys) -> None:
    def refuses(*_):
        raise DataError("x.csv: something is off;\nfix it.")

    with pytest.raises(SystemExit) as exit_:
        command(refuses).main(["--train-file", "x.csv"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err == "error: x.csv: something is off; fix it.\n"


def test_a_failure_while_working_is_one_line_and_status_1(capsys) -> None:
    def fails(*_):
        raise WorkFailed("python -m scratch failed (exit status 1): out of memory")

    assert command(fails).main(["--train-file", "x.csv"]) == 1
    assert capsys.readouterr().err == "error: python -m scratch failed (exit status 1): out of memory\n"
    done = []
    assert command(lambda data: done.append(data.train_file)).main(["--train-file", "x.csv"]) == 0
    assert done == ["x.csv"]


QUIET = textwrap.dedent(
    """
    import sys
    from core.console import quiet_tensorflow
    quiet_tensorflow(verbose=sys.argv[1] == "verbose")
    import tensorflow as tf
    print(float(tf.reduce_sum(tf.ones((2, 2)))))
    """
)


@pytest.mark.slow
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


@pytest.mark.slow
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
        (
            ["--class-weight", "inverse"],
            r"argument --class-weight: invalid choice: 'inverse' \(choose from 'none', 'balanced'\)",
        ),
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


# --- help --------------------------------------------------------------------------------------------------

COMMANDS = {  # the command a user types -> how this test starts it
    "python -m finetune": ["-m", "finetune"],
    "python -m finetune export": ["-m", "finetune", "export"],
    "python -m scratch": ["-m", "scratch"],
    "python -m scratch export": ["-m", "scratch", "export"],
    "python -m compare run": ["-m", "compare", "run"],
    "python -m compare report": ["-m", "compare", "report"],
    "python -m compare predict": ["-m", "compare", "predict"],
    "python -m compare curve": ["-m", "compare", "curve"],
    "python -m compare bench": ["-m", "compare", "bench"],
    "python app.py": ["app.py"],
}
# transformers' package is imported for its `HfArgumentParser` (its modules load lazily); its model code is heavy.
TRANSFORMERS_MODELS = ("transformers.modeling_utils", "transformers.modeling_tf_utils")
HEAVY = (
    "tensorflow",
    *TRANSFORMERS_MODELS,
    "torch",
    "gradio",
    "evaluate",
    "datasets",
    "pandas",
    "sklearn",
    "matplotlib",
)
# Runs a command as `python ...` would, then reports which heavy libraries it imported: answering --help (or
# refusing an option) must not wait for any of them.
PROBE = textwrap.dedent(
    """
    import json, runpy, sys
    argv, watched = json.loads(sys.argv[1]), json.loads(sys.argv[2])
    sys.argv = [argv[1] if argv[0] == "-m" else argv[0], *argv[2 if argv[0] == "-m" else 1:]]
    try:
        if argv[0] == "-m":
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(argv[0], run_name="__main__")
        code = 0
    except SystemExit as stop:
        code = stop.code
    heavy = [name for name in watched if name in sys.modules]
    print(json.dumps({"code": code, "heavy": heavy}), file=sys.stderr)
    """
)


def run_probe(argv: list[str]) -> tuple[int, str, str, list[str]]:
    """(exit status, stdout, stderr without the probe's line, heavy modules imported) of `python <argv>`."""
    import json

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(argv), json.dumps(HEAVY)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    *err, probe = done.stderr.strip().splitlines()
    found = json.loads(probe)
    return found["code"], done.stdout, "\n".join(err), found["heavy"]


def one_line(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("prog", COMMANDS)
def test_every_help_names_its_command_and_loads_no_heavy_library(prog: str) -> None:
    code, out, err, heavy = run_probe([*COMMANDS[prog], "--help"])
    assert code == 0 and err == "", err
    assert out.startswith(f"usage: {prog} [-h]"), out[:200]
    assert heavy == [], f"{prog} --help imported {heavy}"
    assert not re.search(r"--\w+_\w", out), "an option spelled with an underscore"
    assert "(default: None)" not in out and "(default: False)" not in out and "[OVERWRITE]" not in out
    entries = re.split(r"\n  (?=-)", out)  # one per option
    assert all(entry.lower().count("default:") <= 1 for entry in entries), [
        e for e in entries if e.lower().count("default:") > 1
    ]
    translation = "translation options (with --task pt_en or --source-column):"
    takes_both = prog in ("python -m scratch", "python -m compare run")
    assert (translation in out) is takes_both
    if takes_both:
        after = out.split(translation)[1]
        assert "--task {pt_en}" in after and "--source-column" in after and "--target-column" in after
        assert "--beam" in after and "classification options:" in out and "--text-column" in out


def test_help_shows_each_default_once_the_flags_and_the_choices() -> None:
    code, out, _, _ = run_probe(["-m", "finetune", "--help"])
    text = one_line(out)
    assert code == 0
    assert (
        "--max-length MAX_LENGTH Texts are cut to this many tokens (a translation's source and target each). "
        "(default: 128)" in text
    )
    assert text.count("(default: 128)") == 1
    assert (
        "--text-column TEXT_COLUMN [TEXT_COLUMN ...] Text column(s) of your files (default: text); several are "
        "joined with a space. --text-pair-column" in text
    )  # a default the help states is not repeated
    assert "--overwrite Replace an existing run directory." in text
    assert "--no-onnx Do not write model.onnx" in text and "--onnx " not in text
    assert "--task {sst2,emotion,ag_news,trec,imdb,rotten_tomatoes,goemotions_ekman,stsb,sick,sick_relatedness}" in text
    assert "--strategy {default,mirrored,multiworker}" in text and "--pooling {cls,mean}" in text
    assert (
        "usage: python -m finetune [-h] (--task TASK | --train-file TRAIN_FILE) --output-dir OUTPUT_DIR [options]"
        in text
    )
    code, out, _, _ = run_probe(["-m", "finetune", "export", "--help"])
    assert "usage: python -m finetune export [-h] RUN_DIR --output-dir OUTPUT_DIR [options]" in out
    assert "--no-evaluate" in out and "--run-dir" not in out


def test_compare_lists_its_commands_and_refuses_none() -> None:
    code, out, err, heavy = run_probe(["-m", "compare", "--help"])
    assert code == 0 and heavy == [] and out.startswith("usage: python -m compare COMMAND [options]")
    for name in ("run", "report", "predict", "curve", "bench"):
        assert re.search(rf"^  {name} +\w", out, re.MULTILINE), name
    code, out, err, _ = run_probe(["-m", "compare"])
    assert code == 2 and out == "" and "commands:" in err
    assert err.splitlines()[-1] == "error: no command given; choose one of run, report, predict, curve, bench."
    code, _, err, _ = run_probe(["-m", "compare", "train"])
    assert (
        code == 2
        and err.splitlines()[-1] == "error: unknown command 'train'; choose one of run, report, predict, curve, bench."
    )


# --- what a command line may hold ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["-m", "scratch", "--task", "sst2", "--beam", "4"],
            "error: --beam is a translation option (with --task pt_en or --source-column), but --task sst2 is a "
            "classification task; leave it out (see python -m scratch --help).",
        ),
        (
            ["-m", "scratch", "--task", "pt_en", "--tokenizer", "wordpiece", "--augment", "2"],
            "error: --tokenizer, --augment are classification options, but --task pt_en is a translation task; "
            "leave them out (see python -m scratch --help).",
        ),
        (
            ["-m", "scratch", "--train-file", "p.tsv", "--source-column", "pt", "--target-column", "en", "--no-onnx"],
            "error: --no-onnx is a classification option, but --train-file with --source-column is a translation "
            "task; leave it out (see python -m scratch --help).",
        ),
        (
            ["-m", "compare", "run", "--task", "sst2", "--decoder-only"],
            "error: --decoder-only is a translation option (with --task pt_en or --source-column), but --task sst2 "
            "is a classification task; leave it out (see python -m compare run --help).",
        ),
        (
            ["-m", "compare", "run", "--task", "pt_en", "--finetune-args", "--epochs 1"],
            "error: --finetune-args gives flags to finetune, which a translation task does not train (its sides are "
            "scratch); leave them out.",
        ),
        (
            ["-m", "finetune", "--task", "sst2", "--max-step", "3"],
            "error: unrecognized arguments: --max-step 3 (see python -m finetune --help)",
        ),
        (
            ["-m", "scratch", "--task", "pt_en", "--max-tok", "64"],
            "error: unrecognized arguments: --max-tok 64 (see python -m scratch --help)",
        ),
        (
            ["-m", "compare", "run", "--task", "sst", "--output-dir", "x"],
            "error: argument --task: invalid choice: 'sst' (choose from 'sst2', 'emotion', 'ag_news', 'trec', 'imdb', "
            "'rotten_tomatoes', 'goemotions_ekman', 'stsb', 'sick', 'sick_relatedness', 'pt_en') (see python -m compare run --help)",
        ),
    ],
)
def test_an_option_of_the_other_kind_or_a_mistyped_one_is_refused_by_name(argv, message, tmp_path) -> None:
    code, out, err, heavy = run_probe([*argv, "--output-dir", str(tmp_path / "out")])
    assert (code, out, err) == (2, "", message)
    assert heavy == [] and not (tmp_path / "out").exists()


def test_an_options_file_combines_with_flags(tmp_path) -> None:
    import json

    from finetune.__main__ import TRAIN
    from scratch.__main__ import TRAIN as SCRATCH

    options = tmp_path / "opts.json"
    options.write_text(json.dumps({"task": "sst2", "output_dir": "runs/x", "max_steps": 60, "onnx": False}))
    _, (data, run, args) = TRAIN.parse([str(options), "--max-steps", "3"])
    assert (data.task, run.output_dir, args.max_steps, args.onnx) == ("sst2", "runs/x", 3, False)
    _, (data, run, args) = TRAIN.parse([str(options)])
    assert args.max_steps == 60
    options.write_text(json.dumps({"task": "pt_en", "output_dir": "runs/pt", "tie_embeddings": False}))
    kind, (data, run, args) = SCRATCH.parse([str(options), "--preset", "tiny"])
    assert (kind, args.preset, args.tie_embeddings, run.output_dir) == (TRANSLATION, "tiny", False, "runs/pt")
    with pytest.raises(OptionsError, match="--tokenizer is a classification option"):
        SCRATCH.parse([str(options), "--tokenizer", "words"])
