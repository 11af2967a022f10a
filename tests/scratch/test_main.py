"""`python -m scratch` sends translation tasks to the translator and everything else to the classifier."""

from __future__ import annotations

import pytest

from core.args import OptionsError
from core.task_kinds import CLASSIFICATION, TRANSLATION
from scratch.__main__ import TRAIN, main


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--task", "pt_en", "--output-dir", "x"], TRANSLATION),
        (["--task=pt_en", "--output-dir", "x"], TRANSLATION),
        (
            ["--train-file", "f.tsv", "--source-column", "pt", "--target-column", "en", "--output-dir", "x"],
            TRANSLATION,
        ),
        (["--train_file", "f.tsv", "--source_column=pt", "--target_column=en", "--output-dir", "x"], TRANSLATION),
        (["--task", "sst2", "--output-dir", "x"], CLASSIFICATION),
        (["--train-file", "f.csv", "--text-column", "pt", "--output-dir", "x"], CLASSIFICATION),
    ],
)
def test_translation_is_told_from_classification(argv, expected):
    kind, parsed = TRAIN.parse(argv)
    assert kind is expected
    model_options = {TRANSLATION: "TranslationArguments", CLASSIFICATION: "ScratchArguments"}[kind]
    assert model_options in [type(options).__name__ for options in parsed]


def test_a_task_flag_without_its_value_is_refused():
    with pytest.raises(OptionsError, match="argument --task: expected one argument"):
        TRAIN.parse(["--output-dir", "x", "--task"])


def test_a_translation_option_error_is_one_line_through_the_translator(tmp_path, capsys):
    # --num-heads is checked by the translator's options (d_model 64 of the tiny preset), before any data loads.
    with pytest.raises(SystemExit) as stop:
        main(["--task", "pt_en", "--preset", "tiny", "--num-heads", "3", "--output-dir", str(tmp_path / "run")])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: --d-model 64 is not divisible by --num-heads 3")
    assert not (tmp_path / "run").exists() and not (tmp_path / "run.partial").exists()


def test_a_classification_option_error_goes_through_the_classifier(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--task", "sst2", "--class-weight", "heavy", "--output-dir", str(tmp_path / "run")])
    assert stop.value.code == 2
    assert "--class-weight" in capsys.readouterr().err
