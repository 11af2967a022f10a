from __future__ import annotations

import pytest

from core.args import DataArguments, RunArguments, parse_args


def test_command_line_parses_into_the_dataclasses() -> None:
    data, run = parse_args(
        (DataArguments, RunArguments),
        ["--train-file", "a.csv", "--text-column", "title", "body", "--output-dir", "out", "--max-length", "64"],
    )
    assert data.text_column == ["title", "body"] and data.max_length == 64 and data.seed == 42
    assert run.output_dir == "out" and not run.overwrite


def test_bad_values_are_usage_errors(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        parse_args((DataArguments, RunArguments), ["--task", "sst2", "--output-dir", "o", "--max-length", "1"])
    assert "--max-length must be between 2 and 4096 tokens, got 1" in capsys.readouterr().err


def test_data_dir_defaults_to_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEXTCLS_DATA_DIR", "/mirror")
    assert DataArguments(task="sst2").data_dir == "/mirror"
    assert DataArguments(task="sst2", data_dir="/other").data_dir == "/other"


def test_help_lists_the_data_options(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        parse_args((DataArguments, RunArguments), ["--help"])
    assert "10% of train is held out" in capsys.readouterr().out
