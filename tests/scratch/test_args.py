import pytest

from core.args import DataArguments, OptionsError, RunArguments
from core.parsing import parse_args
from scratch.args import ScratchArguments


def parse(*argv):
    return parse_args((DataArguments, RunArguments, ScratchArguments), ["--task", "sst2", "--output-dir", "x", *argv])


# What `python -m scratch` built with no model flags before the dataclass defaults became the `small` preset.
COMMAND_LINE_DEFAULT = {
    "num_labels": 2, "vocab_size": 20000, "num_layers": 2, "d_model": 128, "num_heads": 4, "d_ff": 512,
    "dropout": 0.2, "activation": "gelu", "norm": "post", "causal": False, "tokenizer": "words", "embeddings": "random",
    "problem_type": "single_label_classification", "pairs": False,  # what the task's kind sets
    "pair_reading": None,  # single texts; a pair task's default reading is DEFAULT_PAIR_READING
}  # fmt: skip


def test_defaults_are_the_small_preset():
    _, _, args = parse()
    assert args.preset == "small"
    assert args.model_config().to_dict() == COMMAND_LINE_DEFAULT
    assert args.model_config(num_labels=6).num_labels == 6
    regression = args.model_config(num_labels=1, problem_type="regression", pairs=True)
    assert regression.pair_reading == "cross"  # what validation preferred (docs/results.md)
    assert (regression.num_labels, regression.problem_type, regression.pairs) == (1, "regression", True)


def test_model_flags_override_the_preset():
    _, run, args = parse(
        "--preset", "base", "--num-layers", "3", "--d-model", "96", "--num-heads", "3", "--d-ff", "200",
        "--vocab-size", "500", "--norm", "pre", "--tokenizer", "wordpiece", "--causal", "--strategy", "mirrored",
    )  # fmt: skip
    config = args.model_config()
    assert (config.num_layers, config.d_model, config.num_heads, config.d_ff, config.vocab_size) == (3, 96, 3, 200, 500)
    assert (config.norm, config.tokenizer, config.causal, config.dropout) == ("pre", "wordpiece", True, 0.1)
    assert run.strategy == "mirrored"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--d-model", "100", "--num-heads", "3"], "--d-model 100 is not divisible by --num-heads 3"),
        (["--vocab-size", "1"], "--vocab-size 1 is not larger than the 2 reserved tokens"),
        (["--norm", "sandwich"], "argument --norm: invalid choice: 'sandwich' (choose from 'post', 'pre')"),
        (["--preset", "huge"], "argument --preset: invalid choice: 'huge' (choose from 'tiny', 'small', 'base')"),
        (["--label-smoothing", "1.5"], "--label-smoothing must be in"),
        (["--epochs", "0"], "--epochs must be between 1 and 1000, got 0"),
        (["--learning-rate", "-1"], "--learning-rate must be positive"),
        (["--warmup-ratio", "1"], "--warmup-ratio must be in (0, 1), got 1.0"),
        (["--warmup-steps", "0"], "--warmup-steps must be at least 1, got 0"),
        (["--embeddings", "glove"], "argument --embeddings: invalid choice: 'glove' (choose from 'random', 'minilm')"),
        (["--embeddings", "minilm"], "not for the 'words' tokenizer's; add --tokenizer wordpiece"),
        (["--embeddings", "minilm", "--tokenizer", "wordpiece", "--d-model", "512"], "--d-model 512 is wider"),
    ],
)
def test_bad_options_are_options_errors_that_name_the_value(argv, message):
    with pytest.raises(OptionsError) as error:
        parse(*argv)
    assert message in str(error.value)


def test_warmup_is_a_share_of_the_training_steps_unless_given_in_steps():
    # 1,000 examples in batches of 128 in one length bucket: 8 steps an epoch, 64 steps in the 8 default epochs.
    args = parse()[2]
    assert args.plan(8).total_steps == 64 and args.warmup(64) == 7  # ceil(0.1 * 64)
    assert parse("--warmup-ratio", "0.25")[2].warmup(64) == 16
    budget = parse("--max-steps", "20")[2]
    assert budget.plan(8).total_steps == 20 and budget.warmup(budget.plan(8).total_steps) == 2  # of the 20 that run
    assert parse("--warmup-steps", "500")[2].warmup(64) == 500
    assert parse()[2].warmup(1) == 1  # never zero


def test_epochs_default_to_the_side_s_own_unless_a_budget_is_given():
    assert parse()[2].epochs is None and parse()[2].plan(10).epochs == 8
    assert parse("--max-steps", "25")[2].plan(10).epochs == 3
    assert parse("--max-steps", "25", "--epochs", "2")[2].plan(10).epochs == 2


@pytest.mark.parametrize("side", ["classifier", "translator"])
@pytest.mark.parametrize(
    ("option", "message"),
    [
        ({"learning_rate": 0.0}, "--learning-rate must be positive, got 0.0"),
        ({"label_smoothing": 1.0}, "--label-smoothing must be in [0, 1), got 1.0"),
        ({"weight_decay": -0.01}, "--weight-decay must be >= 0, got -0.01"),
        ({"clip_norm": 0.0}, "--clip-norm must be positive, got 0.0"),
    ],
)
def test_both_trainers_refuse_the_same_bad_optimizer_options(side, option, message):
    from scratch.translation.args import TranslationArguments

    arguments = ScratchArguments if side == "classifier" else TranslationArguments
    with pytest.raises(ValueError) as refused:
        arguments(**option)
    assert str(refused.value) == message + "."
