"""Decoding: the cache changes nothing, beam 1 is greedy, outputs stop at the end id or the length limit."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from scratch.translation import decoding
from scratch.translation.config import config_from_preset
from scratch.translation.model import build_model
from scratch.translation.tokenizer import BOS_ID, EOS_ID, PAD_ID

SOURCE = tf.constant([[5, 6, 7, 8, 3], [9, 10, 3, 0, 0], [11, 3, 0, 0, 0]], tf.int32)
IDS = tf.TensorSpec([None, None], tf.int32)


def _model(arch="encoder-decoder", seed=0, **overrides):
    tf.keras.utils.set_random_seed(seed)
    return build_model(config_from_preset("tiny", arch=arch, **overrides))


def _ends_at_once(model):
    """Biases the output towards the end id so strongly that every sentence ends with its first token."""
    bias = model.output_projection.bias
    bias.assign(tf.tensor_scatter_nd_update(tf.zeros_like(bias), [[EOS_ID]], [4.0]))
    return model


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_cached_greedy_gives_the_uncached_tokens(norm):
    # seed 3: the rows run to their different length limits, padded once they are done
    for model in (_model(norm=norm), _model(norm=norm, seed=3), _ends_at_once(_model(norm=norm, seed=1))):
        cached = decoding.greedy_decode(model, SOURCE, 20)
        uncached = decoding.greedy_decode_uncached(model, SOURCE, 20)
        np.testing.assert_array_equal(cached.numpy(), uncached.numpy())


def test_cached_greedy_inside_tf_function_gives_the_eager_tokens():
    model = _model(seed=3)
    traced = tf.function(lambda s: decoding.greedy_decode(model, s, 40), input_signature=[IDS])
    np.testing.assert_array_equal(traced(SOURCE).numpy(), decoding.greedy_decode(model, SOURCE, 40).numpy())


def test_greedy_is_the_argmax_of_the_model_at_every_step():
    model = _model(seed=3)
    out = decoding.greedy_decode(model, SOURCE[:1], 12).numpy()[0]
    prefix = [BOS_ID]
    for token in out:
        logits = model((SOURCE[:1], tf.constant([prefix])))[0, -1]
        assert token == int(tf.argmax(logits))
        if token == EOS_ID:
            break
        prefix.append(int(token))


@pytest.mark.parametrize("stops", [False, True])
def test_beam_one_equals_greedy(stops):
    model = _ends_at_once(_model(seed=3)) if stops else _model(seed=3)
    greedy = decoding.greedy_decode(model, SOURCE, 30).numpy()
    beam = decoding.beam_search(model, SOURCE, 30, 1).numpy()
    np.testing.assert_array_equal(beam, greedy)


def test_beam_search_finds_a_sequence_at_least_as_likely_as_greedy():
    model = _model(seed=4)

    def log_prob(source, output):
        real = output[: list(output).index(EOS_ID) + 1] if EOS_ID in output else output[output != PAD_ID]
        target = np.concatenate([[BOS_ID], real[:-1]])[None]
        logp = tf.nn.log_softmax(model((source[None], target))[0])
        return float(tf.reduce_sum(tf.gather(logp, real, batch_dims=1)))

    greedy = decoding.greedy_decode(model, SOURCE, 20).numpy()
    beam = decoding.beam_search(model, SOURCE, 20, 4, length_penalty=0.0).numpy()
    for row in range(len(SOURCE)):
        assert log_prob(SOURCE[row], beam[row]) >= log_prob(SOURCE[row], greedy[row]) - 1e-4


def test_outputs_stop_at_the_end_id_or_their_length_limit():
    limits, steps = decoding.output_limits(SOURCE, 200)
    assert limits.numpy().tolist() == [int(np.ceil(1.5 * n)) + 10 for n in (5, 3, 2)]
    assert int(steps) == max(limits.numpy())
    capped, _ = decoding.output_limits(SOURCE, 12)
    assert capped.numpy().tolist() == [12, 12, 12]
    for out in (
        decoding.greedy_decode(_model(), SOURCE, 200),
        decoding.greedy_decode(_ends_at_once(_model()), SOURCE, 200),
    ):
        for row, limit in zip(out.numpy(), limits.numpy()):
            ends = np.flatnonzero(row == EOS_ID)
            stop = ends[0] + 1 if len(ends) else limit
            assert stop <= limit and (row[stop:] == PAD_ID).all() and (row[:stop] != PAD_ID).all()


def _decoder_only_reference(model, source, max_length):
    """Greedy outputs row by row, each step rerunning the whole model over the unpadded prompt and outputs."""
    limits, steps = decoding.output_limits(source, max_length)
    rows = []
    for row, limit in zip(source.numpy(), limits.numpy()):
        sequence = list(row[row != PAD_ID]) + [BOS_ID]
        expected = []
        while len(expected) < limit and EOS_ID not in expected:
            expected.append(int(tf.argmax(model(tf.constant([sequence]))[0, -1])))
            sequence.append(expected[-1])
        rows.append(expected + [PAD_ID] * (int(steps) - len(expected)))
    return np.array(rows)


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_decoder_only_cached_greedy_matches_a_step_by_step_reference(norm):
    # rows of different prompt lengths run through the same positions; seed 1 ends every row at once
    traced = tf.function(lambda s, m: decoding.decoder_only_greedy(m, s, 12))
    for model in (_model("decoder-only", 5, norm=norm), _ends_at_once(_model("decoder-only", 1, norm=norm))):
        expected = _decoder_only_reference(model, SOURCE, 12)
        np.testing.assert_array_equal(decoding.decoder_only_greedy(model, SOURCE, 12).numpy(), expected)
        np.testing.assert_array_equal(traced(SOURCE, model).numpy(), expected)


def test_cross_attention_has_one_map_per_layer_and_head_over_real_source_tokens():
    model = _model()
    output = decoding.greedy_decode(model, SOURCE[1:2], 8)
    weights = decoding.cross_attention(model, SOURCE[1:2], output).numpy()
    c = model.config
    assert weights.shape == (c.num_layers, c.num_heads, output.shape[1], SOURCE.shape[1])
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(weights[..., 3:], 0.0)


def test_a_larger_length_penalty_never_picks_a_shorter_beam():
    # The beams searched do not depend on the penalty, only the final pick among them does, and dividing by a
    # penalty that grows with length favours the longer beams more as the exponent grows.
    model = _model(seed=1)
    bias = model.output_projection.bias
    bias.assign(tf.tensor_scatter_nd_update(tf.zeros_like(bias), [[EOS_ID]], [1.0]))  # some beams end early
    lengths = [
        (decoding.beam_search(model, SOURCE, 20, 4, length_penalty=penalty).numpy() != PAD_ID).sum(axis=1)
        for penalty in (0.0, 2.0, 10.0)
    ]
    for shorter, longer in zip(lengths, lengths[1:]):
        assert (longer >= shorter).all()
    assert (lengths[-1] > lengths[0]).any()  # the case is one where the penalty changes the pick
