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


def write_options(tmp_path, options) -> str:
    import json

    path = tmp_path / "options.json"
    path.write_text(json.dumps(options), encoding="utf-8")
    return str(path)


def test_an_options_file_parses_as_the_flags_it_spells(tmp_path) -> None:
    options = {"train_file": "a.csv", "text-column": "title", "output_dir": "out", "max_length": "64",
               "overwrite": True, "seed": None}  # fmt: skip
    data, run = parse_args((DataArguments, RunArguments), [write_options(tmp_path, options)])
    assert data.text_column == ["title"] and data.max_length == 64 and data.seed == 42
    assert run.output_dir == "out" and run.overwrite is True
    flags = ["--train-file", "a.csv", "--text-column", "title", "--output-dir", "out", "--max-length", "64",
             "--overwrite"]  # fmt: skip
    assert (data, run) == parse_args((DataArguments, RunArguments), flags)


@pytest.mark.parametrize(
    "content, message",
    [
        (None, r"cannot read the options file .*options\.json: No such file or directory"),
        ("{task: sst2}", r"options\.json is not valid JSON \(Expecting property name"),
        ('["--task", "sst2"]', r"options\.json must hold one JSON object of options"),
        (
            '{"task": "sst2", "output_dir": "o", "max_length": "long"}',
            r"argument --max_length.*invalid int value: 'long'",
        ),
        ('{"task": "sst2", "output_dir": "o", "epoch": 2}', r"unrecognized arguments: --epoch 2"),
        ('{"task": "sst2", "output_dir": {"a": 1}}', r"the option 'output_dir' holds an object"),
    ],
)
def test_a_bad_options_file_is_a_usage_error_naming_it(tmp_path, capsys, content, message) -> None:
    import re

    path = tmp_path / "options.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(SystemExit):
        parse_args((DataArguments, RunArguments), [str(path)])
    assert re.search(message, capsys.readouterr().err)


def test_an_options_file_routes_a_translation_task(tmp_path) -> None:
    from core.pairs import is_translation

    assert is_translation([write_options(tmp_path, {"task": "pt_en", "output_dir": "o"})])
    assert is_translation([write_options(tmp_path, {"train_file": "p.tsv", "source_column": "pt"})])
    assert not is_translation([write_options(tmp_path, {"task": "sst2", "output_dir": "o"})])
    assert not is_translation([str(tmp_path / "missing.json")])
