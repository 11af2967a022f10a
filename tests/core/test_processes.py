"""core.processes: commands run in the suite's environment, their output logged or streamed, failures explained."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from core.console import QUIET_TF_LOG_LEVEL
from core.processes import ROOT, ProcessError, exit_error, run_command, start_command


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_output_goes_to_the_log_and_a_printed_result_is_returned(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    assert run_command(python("import sys; print('to stdout'); print('to stderr', file=sys.stderr)"), log=log) == ""
    assert log.read_text().splitlines() == ["to stdout", "to stderr"]
    code = "import sys; print('progress', file=sys.stderr); print('{\"n\": 1}')"
    assert run_command(python(code), log=log, capture_stdout=True) == '{"n": 1}\n'
    assert log.read_text() == "progress\n"


def test_without_a_log_the_output_streams_to_stderr(capsys) -> None:
    run_command(python("print('hello'); print('world')"))
    assert capsys.readouterr().err == "hello\nworld\n"


def test_a_failure_carries_the_commands_error_line(tmp_path: Path) -> None:
    noise = "import sys; [print(f'epoch {i}', file=sys.stderr) for i in range(50)]; "
    cmd = python(noise + "sys.exit('error: --train-file data.csv has no column text; choose with --text-column')")
    with pytest.raises(ProcessError) as raised:
        run_command(cmd, log=tmp_path / "side.log")
    error = raised.value
    assert error.returncode == 1 and error.log == tmp_path / "side.log"
    assert error.detail == "error: --train-file data.csv has no column text; choose with --text-column"
    assert str(error).startswith("`python -c ") and "failed (exit 1); full output in" in str(error)
    assert "epoch 49" in (tmp_path / "side.log").read_text() and "epoch" not in error.detail


def test_a_failure_without_an_error_line_carries_the_end_of_the_output(tmp_path: Path) -> None:
    code = "import sys; [print(f'line {i}', file=sys.stderr) for i in range(30)]; sys.exit(3)"
    with pytest.raises(ProcessError, match=r"exit 3") as raised:
        run_command(python(code), capture_stdout=True, log=tmp_path / "x.log")
    assert raised.value.detail.splitlines() == [f"line {i}" for i in range(10, 30)]
    with pytest.raises(ProcessError, match=r"(?s)No module named no_such_side"):
        run_command([sys.executable, "-m", "no_such_side"])


def test_children_get_the_suites_environment(tmp_path: Path, monkeypatch) -> None:
    code = "import os; print(os.environ['TF_USE_LEGACY_KERAS'], os.environ['TF_CPP_MIN_LOG_LEVEL'], os.environ['PYTHONPATH'], os.getcwd())"
    monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL", raising=False)
    keras, level, path, cwd = run_command(python(code), capture_stdout=True).split()
    assert (keras, level, cwd) == ("1", QUIET_TF_LOG_LEVEL, str(ROOT)) and str(ROOT) in path.split(":")
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "0")  # what --verbose sets
    assert run_command(python(code), capture_stdout=True).split()[1] == "0"
    assert (
        run_command(python("import os; print(os.environ['EXTRA'])"), capture_stdout=True, env={"EXTRA": "x"}) == "x\n"
    )


def test_a_started_command_that_exits_early_is_explained(tmp_path: Path) -> None:
    log = tmp_path / "app.log"
    process = start_command(python("import sys; print('loading'); sys.exit('error: no runs to serve')"), log)
    assert process.wait(timeout=60) == 1
    error = exit_error(process, log)
    assert error.detail == "error: no runs to serve" and error.log == log and error.returncode == 1
