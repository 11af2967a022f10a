from __future__ import annotations

import pytest

from core.args import DataArguments, OptionsError, RunArguments
from core.parsing import parse_args


def test_command_line_parses_into_the_dataclasses() -> None:
    data, run = parse_args(
        (DataArguments, RunArguments),
        ["--train-file", "a.csv", "--text-column", "title", "body", "--output-dir", "out", "--max-length", "64"],
    )
    assert data.text_column == ["title", "body"] and data.max_length == 64 and data.seed == 42
    assert run.output_dir == "out" and not run.overwrite


def test_bad_values_are_options_errors() -> None:
    with pytest.raises(OptionsError, match="--max-length must be between 2 and 4096 tokens, got 1"):
        parse_args((DataArguments, RunArguments), ["--task", "sst2", "--output-dir", "o", "--max-length", "1"])


def test_data_dir_defaults_to_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEXTCLS_DATA_DIR", "/mirror")
    assert DataArguments(task="sst2").data_dir == "/mirror"
    assert DataArguments(task="sst2", data_dir="/other").data_dir == "/other"


def test_help_lists_the_data_options(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exit_:
        parse_args((DataArguments, RunArguments), ["--help"])
    assert exit_.value.code == 0 and "10% of train is held out" in " ".join(capsys.readouterr().out.split())


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
            r"argument --max-length.*invalid int value: 'long'",
        ),
        ('{"task": "sst2", "output_dir": "o", "epoch": 2}', r"unrecognized arguments: --epoch 2"),
        ('{"task": "sst2", "output_dir": {"a": 1}}', r"the option 'output_dir' holds an object"),
    ],
)
def test_a_bad_options_file_is_an_options_error_naming_it(tmp_path, content, message) -> None:
    path = tmp_path / "options.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(OptionsError, match=message):
        parse_args((DataArguments, RunArguments), [str(path)])


def test_flags_after_an_options_file_override_it(tmp_path) -> None:
    options = {"task": "sst2", "output_dir": "from-file", "max_length": 64, "seed": 7, "overwrite": True}
    data, run = parse_args((DataArguments, RunArguments), [write_options(tmp_path, options), "--max-length", "32"])
    assert (data.task, data.max_length, data.seed, run.output_dir, run.overwrite) == ("sst2", 32, 7, "from-file", True)
    data, run = parse_args((DataArguments, RunArguments), [write_options(tmp_path, options), "--no-overwrite"])
    assert data.max_length == 64 and run.overwrite is False


def test_an_options_file_routes_a_translation_task(tmp_path) -> None:
    from core.task_kinds import CLASSIFICATION, TRANSLATION
    from scratch.__main__ import TRAIN

    assert TRAIN.parse([write_options(tmp_path, {"task": "pt_en", "output_dir": "o"})])[0] is TRANSLATION
    pairs = {"train_file": "p.tsv", "source_column": "pt", "target_column": "en", "output_dir": "o"}
    assert TRAIN.parse([write_options(tmp_path, pairs)])[0] is TRANSLATION
    assert TRAIN.parse([write_options(tmp_path, {"task": "sst2", "output_dir": "o"})])[0] is CLASSIFICATION
    with pytest.raises(OptionsError, match="cannot read the options file .*missing.json"):
        TRAIN.parse([str(tmp_path / "missing.json")])
