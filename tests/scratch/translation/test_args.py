"""Command-line options: presets fill what is not given; bad values are named."""

from __future__ import annotations

import pytest

from core.args import RunArguments
from core.pairs import PairDataArguments
from core.parsing import parse_args
from scratch.translation.args import PRESET_TRAINING, TranslationArguments
from scratch.translation.config import PRESETS, TranslationConfig


def test_the_preset_fills_model_and_budget_and_flags_win():
    args = TranslationArguments(preset="small", epochs=3)
    assert args.epochs == 3 and args.max_tokens == PRESET_TRAINING["small"]["max_tokens"]
    config = args.model_config(vocab_size=1234)
    assert (config.d_model, config.num_layers, config.vocab_size) == (
        PRESETS["small"]["d_model"],
        PRESETS["small"]["num_layers"],
        1234,
    )


def test_every_preset_sets_the_whole_budget_and_patience_comes_from_it_unless_given():
    for preset, budget in PRESET_TRAINING.items():
        args = TranslationArguments(preset=preset)
        assert {name: getattr(args, name) for name in budget} == budget
    assert TranslationArguments(preset="base").patience == PRESET_TRAINING["base"]["patience"] == 4
    assert TranslationArguments(preset="base", patience=2).patience == 2
    with pytest.raises(ValueError, match="--patience must be at least 1, got 0"):
        TranslationArguments(patience=0)


def test_the_tutorial_shape_and_every_size_are_reachable_by_flags():
    config = TranslationArguments(num_layers=4, d_model=128, d_ff=512, num_heads=8).model_config()
    assert (config.num_layers, config.d_model, config.d_ff, config.num_heads, config.dropout) == (4, 128, 512, 8, 0.1)
    custom = TranslationArguments(preset="tiny", num_layers=6, d_model=96, num_heads=6, d_ff=384).model_config()
    assert (custom.num_layers, custom.d_model, custom.num_heads, custom.d_ff) == (6, 96, 6, 384)


# What `python -m scratch --task pt_en` built with no model flags before the dataclass defaults became `base`.
COMMAND_LINE_DEFAULT = {
    "vocab_size": 3000, "arch": "encoder-decoder", "num_layers": 2, "d_model": 256, "num_heads": 8, "d_ff": 1024,
    "dropout": 0.1, "norm": "post", "activation": "relu", "tie_embeddings": True,
}  # fmt: skip


def test_the_command_line_default_model_is_unchanged_and_is_the_config_built_with_no_arguments():
    *_, args = parse_args(
        (PairDataArguments, RunArguments, TranslationArguments), ["--task", "pt_en", "--output-dir", "out"]
    )
    assert args.model_config().to_dict() == COMMAND_LINE_DEFAULT
    assert args.model_config() == TranslationConfig()


def test_the_command_line_parses_into_the_three_dataclasses():
    data, run, args = parse_args(
        (PairDataArguments, RunArguments, TranslationArguments),
        ["--task", "pt_en", "--output-dir", "out", "--arch", "decoder-only", "--no-tie-embeddings", "--norm", "pre"],
    )
    assert data.task == "pt_en" and run.output_dir == "out"
    assert (args.arch, args.tie_embeddings, args.norm) == ("decoder-only", False, "pre")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"beam": 0}, "--beam must be at least 1"),
        ({"arch": "decoder-only", "beam": 4}, "encoder-decoder only"),
        ({"early_stopping": "bleu"}, "--early-stopping must be one of chrf, loss"),
        ({"preset": "huge"}, "--preset must be one of tiny, small, base"),
        ({"num_heads": 5}, "not divisible by --num-heads 5"),
        ({"label_smoothing": 1.0}, "--label-smoothing must be in [0, 1)"),
        ({"epochs": 0}, "--epochs must be between 1 and 1000, got 0"),
        ({"epochs": 1001}, "--epochs must be between 1 and 1000, got 1001"),
        ({"max_steps": 0}, "--max-steps must be at least 1, got 0"),
    ],
)
def test_bad_values_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        TranslationArguments(**kwargs)
