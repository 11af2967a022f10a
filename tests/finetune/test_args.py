from __future__ import annotations

import pytest

from finetune.__main__ import main
from finetune.args import FinetuneArguments


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"learning_rate": 0.5}, "--learning-rate must be in (0, 0.01], got 0.5"),
        ({"learning_rate": 0.0}, "--learning-rate must be in (0, 0.01], got 0.0"),
        ({"batch_size": 0}, "--batch-size must be between 1 and 4096, got 0"),
        ({"epochs": 0}, "--epochs must be between 1 and 1000, got 0"),
        ({"warmup_ratio": 1.0}, "--warmup-ratio must be in [0, 1), got 1.0"),
        ({"weight_decay": -0.1}, "--weight-decay must be in [0, 1), got -0.1"),
    ],
)
def test_out_of_range_values_are_named(options: dict, message: str) -> None:
    with pytest.raises(ValueError) as error:
        FinetuneArguments(**options)
    assert message in str(error.value)


def test_defaults_are_valid() -> None:
    args = FinetuneArguments()
    assert args.model == "minilm" and args.to_dict()["batch_size"] == args.batch_size
    assert args.epochs is None and args.plan(100).epochs == 3 and args.class_weight == "none"


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--learning-rate", "3"], "--learning-rate must be in (0, 0.01], got 3.0"),
        (["--batch-size", "-4"], "--batch-size must be between 1 and 4096, got -4"),
        (["--max-length", "1"], "--max-length must be between 2 and 4096 tokens, got 1"),
    ],
)
def test_command_line_refuses_bad_values_before_training(tmp_path, tiny_csv, capsys, flags, message) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--train-file", str(tiny_csv), "--output-dir", str(tmp_path / "run"), *flags])
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "run.partial").exists()
