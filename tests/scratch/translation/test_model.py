"""The translation models: config round trip, masks, tied embeddings, the decoder-only variant."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from scratch.translation.config import DEFAULT_PRESET, TranslationConfig, config_from_preset
from scratch.translation.model import DecoderOnly, EncoderDecoder, TiedOutput, build_model
from tests.scratch.layer_checks import check_layer

SOURCE = np.array([[5, 6, 7, 8, 3], [9, 10, 3, 0, 0]], np.int32)
TARGET = np.array([[2, 11, 12, 13], [2, 14, 15, 0]], np.int32)


def _model(**overrides):
    tf.keras.utils.set_random_seed(0)
    return build_model(config_from_preset("tiny", **overrides))


def test_a_config_built_with_no_arguments_is_the_default_preset():
    assert DEFAULT_PRESET == "base"
    assert TranslationConfig() == config_from_preset(DEFAULT_PRESET) == config_from_preset()
    assert TranslationConfig() != config_from_preset("small")


@pytest.mark.parametrize("arch", ["encoder-decoder", "decoder-only"])
def test_round_trips_its_config_with_the_same_logits(arch, tmp_path):
    model = _model(arch=arch, norm="pre")
    inputs = (SOURCE, TARGET) if arch == "encoder-decoder" else np.concatenate([SOURCE, TARGET], axis=1)
    logits = model(inputs)
    serialized = tf.keras.saving.serialize_keras_object(model)
    clone = tf.keras.saving.deserialize_keras_object(serialized)
    assert type(clone) is type(model) and clone.config == model.config
    clone(inputs)
    model.save_weights(str(tmp_path / "w"))
    clone.load_weights(str(tmp_path / "w"))
    np.testing.assert_allclose(clone(inputs), logits, atol=1e-6)


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_later_target_tokens_do_not_change_earlier_logits(norm):
    model = _model(norm=norm)
    before = model((SOURCE, TARGET)).numpy()
    changed = TARGET.copy()
    changed[0, 2:] = [40, 41]
    after = model((SOURCE, changed)).numpy()
    np.testing.assert_allclose(after[0, :2], before[0, :2], atol=1e-6)
    np.testing.assert_allclose(after[1], before[1], atol=1e-6)
    assert not np.allclose(after[0, 2:], before[0, 2:], atol=1e-3)


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_padding_the_source_batch_leaves_the_logits_unchanged(norm):
    model = _model(norm=norm)
    before = model((SOURCE, TARGET)).numpy()
    padded = np.pad(SOURCE, [[0, 0], [0, 4]])
    after = model((padded, TARGET)).numpy()
    np.testing.assert_allclose(after, before, atol=1e-5)


def test_tied_embeddings_share_the_table_with_the_output():
    tied, untied = _model(), _model(tie_embeddings=False)
    c = tied.config
    assert untied.count_params() - tied.count_params() == c.vocab_size * c.d_model
    hidden = tf.random.normal([1, 1, c.d_model])
    table = tied.embedding.token_embedding.embeddings
    bias = np.random.default_rng(0).normal(size=c.vocab_size).astype(np.float32)
    tied.output_projection.bias.assign(bias)
    np.testing.assert_allclose(tied.logits(hidden)[0, 0], tf.linalg.matvec(table, hidden[0, 0]) + bias, atol=1e-5)


def test_the_tied_output_layer_round_trips_its_config():
    table = tf.random.normal([50, 8])
    check_layer(
        TiedOutput,
        {"vocab_size": 50},
        np.random.default_rng(0).normal(size=[2, 3, 8]).astype(np.float32),
        expected_shape=(2, 3, 50),
        expected_weights=50,
        call_kwargs={"table": table},
    )


def test_decoder_only_is_causal_over_the_joined_sequence():
    model = _model(arch="decoder-only")
    assert isinstance(model, DecoderOnly) and not isinstance(model, EncoderDecoder)
    sequence = np.concatenate([SOURCE, TARGET], axis=1)
    before = model(sequence).numpy()
    changed = sequence.copy()
    changed[:, 6:] = 20
    after = model(changed).numpy()
    np.testing.assert_allclose(after[:, :6], before[:, :6], atol=1e-6)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"d_model": 30, "num_heads": 4}, "--d-model 30 is not divisible by --num-heads 4"),
        ({"vocab_size": 3}, "smaller than the reserved ids"),
        ({"arch": "lstm"}, "--arch must be one of"),
    ],
)
def test_bad_shapes_are_refused_with_the_value_named(overrides, message):
    with pytest.raises(ValueError, match=message):
        config_from_preset("tiny", **overrides)


# The checkpoint keys (object paths, as `weights/model` stores them) and `get_weights()` shapes of a one-layer
# pre-LN tiny model, written down from the code that trained the existing runs: a run trained then loads now.
ATTENTION = [
    f"{p}/{k}" for p in ("key_dense", "output_dense", "query_dense", "value_dense") for k in ("bias", "kernel")
]
FEED_FORWARD = [
    "ff_inner/bias",
    "ff_inner/kernel",
    "ff_norm/beta",
    "ff_norm/gamma",
    "ff_output/bias",
    "ff_output/kernel",
]
COMMON = ["accuracy_tracker/count", "accuracy_tracker/total", "embedding/token_embedding/embeddings"]
COMMON += ["loss_tracker/count", "loss_tracker/total", "output_projection/bias"]
CHECKPOINT_KEYS = {
    "encoder-decoder": COMMON
    + [f"decoder_blocks/0/{a}/{k}" for a in ("cross_attention", "self_attention") for k in ATTENTION]
    + ["decoder_blocks/0/cross_norm/beta", "decoder_blocks/0/cross_norm/gamma"]
    + [f"decoder_blocks/0/{k}" for k in FEED_FORWARD]
    + ["decoder_blocks/0/self_norm/beta", "decoder_blocks/0/self_norm/gamma", "decoder_norm/beta", "decoder_norm/gamma"]
    + [f"encoder_blocks/0/attention/{k}" for k in ATTENTION]
    + ["encoder_blocks/0/attention_norm/beta", "encoder_blocks/0/attention_norm/gamma"]
    + [f"encoder_blocks/0/{k}" for k in FEED_FORWARD]
    + ["encoder_norm/beta", "encoder_norm/gamma"],
    "decoder-only": COMMON
    + [f"blocks/0/attention/{k}" for k in ATTENTION]
    + ["blocks/0/attention_norm/beta", "blocks/0/attention_norm/gamma"]
    + [f"blocks/0/{k}" for k in FEED_FORWARD]
    + ["final_norm/beta", "final_norm/gamma"],
}
SQUARE, VECTOR, BLOCK_FF = (64, 64), (64,), [(64, 128), (128,), (128, 64), (64,)]
SELF_BLOCK = [SQUARE, VECTOR] * 4 + [VECTOR] * 2 + BLOCK_FF + [VECTOR] * 2
WEIGHT_SHAPES = {
    "encoder-decoder": [(300, 64), (300,), (), (), (), ()]
    + SELF_BLOCK
    + [SQUARE, VECTOR] * 8
    + [VECTOR] * 6
    + BLOCK_FF
    + [VECTOR] * 4,
    "decoder-only": [(300, 64), (300,), (), (), (), ()] + SELF_BLOCK + [VECTOR] * 2,
}


@pytest.mark.parametrize("arch", ["encoder-decoder", "decoder-only"])
def test_the_weights_keep_the_structure_existing_runs_were_saved_with(arch, tmp_path):
    model = _model(arch=arch, norm="pre", num_layers=1)
    assert [tuple(w.shape) for w in model.get_weights()] == WEIGHT_SHAPES[arch]
    model.save_weights(str(tmp_path / "model"))
    suffix = "/.ATTRIBUTES/VARIABLE_VALUE"
    keys = [k.removesuffix(suffix) for k, _ in tf.train.list_variables(str(tmp_path / "model")) if k.endswith(suffix)]
    assert sorted(keys) == sorted(CHECKPOINT_KEYS[arch])
    tf.keras.utils.set_random_seed(1)
    clone = build_model(model.config)
    clone.load_weights(str(tmp_path / "model")).assert_consumed()  # every saved value has its variable, and back
    inputs = (SOURCE, TARGET) if arch == "encoder-decoder" else np.concatenate([SOURCE, TARGET], axis=1)
    np.testing.assert_allclose(clone(inputs), model(inputs), atol=1e-6)
