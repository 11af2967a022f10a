"""Decoding through the one loop: the cache changes nothing, beam 1 is greedy, outputs stop at the end id or the
length limit, and beam search ranks finished hypotheses with the length penalty while it prunes them."""

from __future__ import annotations

import math

import numpy as np
import pytest
import tensorflow as tf

from scratch.translation import decoding
from scratch.translation.config import config_from_preset
from scratch.translation.decoding import BeamSearch, Greedy, Uncached, decode
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


def _greedy(model, source, max_length):
    return decode(model, source, max_length, Greedy()).best.numpy()


@pytest.mark.slow
@pytest.mark.parametrize("norm", ["post", "pre"])
def test_cached_decoding_gives_the_uncached_tokens(norm):
    # seed 3: the rows run to their different length limits, padded once they are done
    for model in (_model(norm=norm), _model(norm=norm, seed=3), _ends_at_once(_model(norm=norm, seed=1))):
        np.testing.assert_array_equal(_greedy(model, SOURCE, 20), _greedy(Uncached(model), SOURCE, 20))
        cached, uncached = (decode(m, SOURCE, 20, BeamSearch(3)) for m in (model, Uncached(model)))
        np.testing.assert_array_equal(cached.ids.numpy(), uncached.ids.numpy())
        np.testing.assert_allclose(cached.scores.numpy(), uncached.scores.numpy(), atol=1e-4)


@pytest.mark.slow
def test_decoding_inside_tf_function_gives_the_eager_tokens():
    model = _model(seed=3)
    traced = tf.function(lambda s: decode(model, s, 40).best, input_signature=[IDS])
    np.testing.assert_array_equal(traced(SOURCE).numpy(), _greedy(model, SOURCE, 40))
    width = tf.TensorSpec([], tf.int32)  # the exported translator's beam is an argument of the graph
    beam = tf.function(lambda s, k: decode(model, s, 40, BeamSearch(k)).ids, input_signature=[IDS, width])
    np.testing.assert_array_equal(beam(SOURCE, 3).numpy(), decode(model, SOURCE, 40, BeamSearch(3)).ids.numpy())


def test_greedy_is_the_argmax_of_the_model_at_every_step():
    model = _model(seed=3)
    out = _greedy(model, SOURCE[:1], 12)[0]
    prefix = [BOS_ID]
    for token in out:
        logits = model((SOURCE[:1], tf.constant([prefix])))[0, -1]
        assert token == int(tf.argmax(logits))
        if token == EOS_ID:
            break
        prefix.append(int(token))


@pytest.mark.slow
@pytest.mark.parametrize("stops", [False, True])
def test_beam_one_equals_greedy(stops):
    model = _ends_at_once(_model(seed=3)) if stops else _model(seed=3)
    greedy = _greedy(model, SOURCE, 30)
    for width in (1, tf.constant(1)):
        np.testing.assert_array_equal(decode(model, SOURCE, 30, BeamSearch(width)).best.numpy(), greedy)


def _log_prob(model, source, output):
    real = output[: list(output).index(EOS_ID) + 1] if EOS_ID in output else output[output != PAD_ID]
    target = np.concatenate([[BOS_ID], real[:-1]])[None]
    logp = tf.nn.log_softmax(model((source[None], target))[0])
    return float(tf.reduce_sum(tf.gather(logp, real, batch_dims=1))), len(real)


@pytest.mark.slow
def test_beam_search_finds_a_sequence_at_least_as_likely_as_greedy_and_scores_what_it_returns():
    model = _model(seed=4)
    greedy = _greedy(model, SOURCE, 20)
    found = decode(model, SOURCE, 20, BeamSearch(4, length_penalty=0.0))
    for row in range(len(SOURCE)):
        best, _ = _log_prob(model, SOURCE[row], found.best.numpy()[row])
        assert best >= _log_prob(model, SOURCE[row], greedy[row])[0] - 1e-4
    penalised = decode(model, SOURCE, 20, BeamSearch(4))
    scores = penalised.scores.numpy()
    assert (np.diff(scores, axis=1) <= 0).all()  # best first
    for row in range(len(SOURCE)):
        for ids, score in zip(penalised.ids.numpy()[row], scores[row]):
            log_prob, length = _log_prob(model, SOURCE[row], ids)
            assert score == pytest.approx(log_prob / ((5 + length) / 6) ** decoding.DEFAULT_LENGTH_PENALTY, abs=1e-4)


@pytest.mark.slow
@pytest.mark.parametrize("search", [Greedy(), BeamSearch(3)])
def test_outputs_stop_at_the_end_id_or_their_length_limit(search):
    limits, steps = decoding.output_limits(SOURCE, 200)
    assert limits.numpy().tolist() == [int(np.ceil(1.5 * n)) + 10 for n in (5, 3, 2)]
    assert int(steps) == max(limits.numpy())
    capped, _ = decoding.output_limits(SOURCE, 12)
    assert capped.numpy().tolist() == [12, 12, 12]
    for model in (_model(), _ends_at_once(_model())):
        found = decode(model, SOURCE, 200, search)
        for hypotheses, limit in zip(found.ids.numpy(), limits.numpy()):
            for row in hypotheses:
                ends = np.flatnonzero(row == EOS_ID)
                stop = ends[0] + 1 if len(ends) else limit
                assert stop <= limit and (row[stop:] == PAD_ID).all() and (row[:stop] != PAD_ID).all()


@pytest.mark.slow
def test_padding_the_source_batch_changes_no_output():
    model = _model(seed=3)
    padded = tf.pad(SOURCE, [[0, 0], [0, 4]])
    for search in (Greedy(), BeamSearch(3)):
        alone = [decode(model, SOURCE[i : i + 1, :n], 20, search).ids.numpy()[0] for i, n in enumerate((5, 3, 2))]
        batched = decode(model, padded, 20, search).ids.numpy()
        for row, ids in zip(batched, alone):
            np.testing.assert_array_equal(row[:, : ids.shape[1]], ids)
            assert (row[:, ids.shape[1] :] == PAD_ID).all()


class FixedModel:
    """A stand-in model whose next-token probabilities depend only on the last token and the position.

    After the start id: the end id 0.5, `a` 0.3, `b` 0.2. After `a`: `y`, and after `y`, `y` again (certain), so
    that hypothesis never ends. After `b`: `x`; after `x`: `x` until position 5, where it is the end id.
    """

    A, B, X, Y = 4, 5, 6, 7
    VOCAB = 8

    def table(self, last: int, position: int) -> np.ndarray:
        p = np.full(self.VOCAB, 1e-9)
        if last == BOS_ID:
            p[[EOS_ID, self.A, self.B]] = [0.5, 0.3, 0.2]
        elif last in (self.A, self.Y):
            p[self.Y] = 1.0
        elif last == self.B:
            p[self.X] = 1.0
        elif last == self.X:
            p[EOS_ID if position == 5 else self.X] = 1.0
        else:
            p[:] = 1.0
        return np.log(p / p.sum())

    def start_decoding(self, source, length):
        batch = tf.shape(source)[0]
        return tf.zeros([batch, 1]), {}, tf.zeros([batch], tf.int32)

    def step(self, token_ids, positions, cache, context):
        logits = tf.constant([[self.table(last, t) for last in range(self.VOCAB)] for t in range(20)], tf.float32)
        return tf.gather_nd(logits, tf.stack([positions, token_ids], axis=1)), cache


def test_a_longer_hypothesis_pruned_by_raw_log_probability_is_kept_and_chosen_with_the_penalty():
    model, source = FixedModel(), tf.constant([[9, EOS_ID]])
    lp = lambda n: ((5 + n) / 6) ** 2.0  # noqa: E731 - GNMT, alpha 2
    # After the first position, ranking the three by raw log-probability keeps the end id (log 0.5) and `a`
    # (log 0.3) in a beam of 2, and `b` (log 0.2) is lost. With the penalty, `b x x x x </s>` (log 0.2, 6 tokens)
    # scores log(0.2) / lp(6) = -0.479, above the ended `</s>` (log(0.5) / lp(1) = -0.693).
    assert math.log(0.2) < math.log(0.3) < math.log(0.5) and math.log(0.2) / lp(6) > math.log(0.5) / lp(1)
    found = decode(model, source, 50, BeamSearch(2))
    b, x = FixedModel.B, FixedModel.X
    assert found.ids.numpy()[0].tolist() == [[b, x, x, x, x, EOS_ID], [EOS_ID, PAD_ID, PAD_ID, PAD_ID, PAD_ID, PAD_ID]]
    np.testing.assert_allclose(found.scores.numpy()[0], [math.log(0.2) / lp(6), math.log(0.5) / lp(1)], rtol=1e-5)
    # greedy (and a beam of 1) takes the end id, the most likely first token, and stops there
    assert decode(model, source, 50).best.numpy()[0].tolist() == [EOS_ID]
    assert decode(model, source, 50, BeamSearch(1)).best.numpy()[0].tolist() == [EOS_ID]


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
        rows.append(expected)
    width = max(len(r) for r in rows)
    return np.array([r + [PAD_ID] * (width - len(r)) for r in rows])


@pytest.mark.slow
@pytest.mark.parametrize("norm", ["post", "pre"])
def test_decoder_only_cached_greedy_matches_a_step_by_step_reference(norm):
    # rows of different prompt lengths, each decoded from its own position; seed 1 ends every row at once
    traced = tf.function(lambda s, m: decode(m, s, 12).best)
    for model in (_model("decoder-only", 5, norm=norm), _ends_at_once(_model("decoder-only", 1, norm=norm))):
        expected = _decoder_only_reference(model, SOURCE, 12)
        np.testing.assert_array_equal(_greedy(model, SOURCE, 12), expected)
        np.testing.assert_array_equal(traced(SOURCE, model).numpy(), expected)


def test_decoder_only_beam_one_is_its_greedy():
    model = _model("decoder-only", 5)
    np.testing.assert_array_equal(decode(model, SOURCE, 12, BeamSearch(1)).best.numpy(), _greedy(model, SOURCE, 12))


def test_cross_attention_has_one_map_per_layer_and_head_over_real_source_tokens():
    model = _model()
    output = decode(model, SOURCE[1:2], 8).best
    weights = decoding.cross_attention(model, SOURCE[1:2], output).numpy()
    c = model.config
    assert weights.shape == (c.num_layers, c.num_heads, output.shape[1], SOURCE.shape[1])
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(weights[..., 3:], 0.0)


def test_a_larger_length_penalty_never_picks_a_shorter_output():
    # Which hypotheses finish does not depend on the penalty (they end among the K most likely candidates, and a
    # sentence stops after K), only their ranking does, and dividing by a penalty that grows with length favours
    # the longer ones more as the exponent grows.
    model = _model(seed=1)
    bias = model.output_projection.bias
    bias.assign(tf.tensor_scatter_nd_update(tf.zeros_like(bias), [[EOS_ID]], [2.0]))  # some hypotheses end early
    lengths = [
        (decode(model, SOURCE, 20, BeamSearch(4, penalty)).best.numpy() != PAD_ID).sum(axis=1)
        for penalty in (0.0, 2.0, 10.0)
    ]
    for shorter, longer in zip(lengths, lengths[1:]):
        assert (longer >= shorter).all()
    assert (lengths[-1] > lengths[0]).any()  # the case is one where the penalty changes the pick
