"""Batched decoding: one loop over output positions, in which a search (greedy or beam) chooses the next tokens.

`decode(model, source, max_length, search)` takes source ids (B, Ts) as `tokenizer.encode_source` makes them and
returns the search's `Hypotheses`: K output id sequences per sentence (B, K, T), best first, each the tokens up
to and including its end id, then padding, and their scores (B, K). A hypothesis stops at its end id or after
its sentence's `output_limits` tokens, whichever comes first. Written for `tf.function` (an AutoGraph loop): the
exported translator runs it.

The loop is the standard sequence beam search (tensor2tensor's, fairseq's), of which greedy is width 1. Each
sentence keeps K alive hypotheses, all of the same length, and K finished ones. At every position the search
proposes candidates among the alive hypotheses' extensions by summed log-probability (`Greedy`: the best one;
`BeamSearch`: the best 2K, so that K remain after those that end are taken out). A candidate that ends (its end
id, among the best K) joins the finished hypotheses with its score divided by the GNMT length penalty
((5 + length) / 6) ** alpha, and the finished keep the K best of those scores; the best K candidates that did
not end stay alive. So a short hypothesis that ends early no longer takes an alive one's place, and finished
hypotheses of different lengths are ranked with the penalty as they are pruned. A sentence is done once K of
its hypotheses have finished (or at its length limit, where its alive ones finish as they are).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import tensorflow as tf

from scratch.translation.config import DEFAULT_LENGTH_PENALTY
from scratch.translation.tokenizer import BOS_ID, EOS_ID, PAD_ID

LENGTH_RATIO = 1.5  # an output may run to 1.5 times its source, plus LENGTH_EXTRA tokens
LENGTH_EXTRA = 10
NEG_INF = float("-inf")


class Hypotheses(NamedTuple):
    """A search's outputs: `ids` (B, K, T) and `scores` (B, K), each sentence's best first.

    A score is the summed log-probability divided by the length penalty; -inf marks an empty slot (a
    vocabulary too small to give K hypotheses).
    """

    ids: tf.Tensor
    scores: tf.Tensor

    @property
    def best(self) -> tf.Tensor:
        """(B, T) each sentence's best output."""
        return self.ids[:, 0]


@dataclass(frozen=True)
class Greedy:
    """The most likely next token: one hypothesis per sentence, finished by the first end id it picks."""

    width = 1
    length_penalty = 0.0  # one hypothesis: there is nothing to rank

    def candidates(self, scores: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """(B, K*V) summed log-probabilities of every extension -> the proposed ones' scores and indices (B, 1)."""
        return tf.math.top_k(scores, k=1)


@dataclass(frozen=True)
class BeamSearch:
    """The `width` best hypotheses by summed log-probability, finished ones ranked with the length penalty.

    Args:
        width: K, an int or an int32 scalar tensor (the exported translator's argument).
        length_penalty: alpha of GNMT's ((5 + length) / 6) ** alpha; larger values favour longer outputs.
    """

    width: Any
    length_penalty: float = DEFAULT_LENGTH_PENALTY

    def candidates(self, scores: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """(B, K*V) -> the best 2K extensions' scores and indices (B, 2K): K of them at least do not end."""
        return tf.math.top_k(scores, k=2 * self.width)


def length_penalty(length: tf.Tensor, alpha: float) -> tf.Tensor:
    """GNMT's ((5 + length) / 6) ** alpha (Wu et al. 2016), which a finished hypothesis's log-probability is
    divided by."""
    return tf.pow((5.0 + tf.cast(length, tf.float32)) / 6.0, alpha)


def output_limits(source: tf.Tensor, max_length: int) -> tuple[tf.Tensor, tf.Tensor]:
    """Each sentence's most output tokens (B,) relative to its source length, capped at `max_length`; their max."""
    lengths = tf.reduce_sum(tf.cast(tf.not_equal(source, PAD_ID), tf.float32), axis=1)  # (B,)
    limits = tf.cast(tf.math.ceil(LENGTH_RATIO * lengths), tf.int32) + LENGTH_EXTRA
    limits = tf.minimum(limits, max_length)
    return limits, tf.reduce_max(limits)


def _pad_to(ids: tf.Tensor, length: tf.Tensor) -> tf.Tensor:
    """(B, N, t) ids padded with PAD_ID to (B, N, length)."""
    return tf.pad(ids, [[0, 0], [0, 0], [0, length - tf.shape(ids)[2]]], constant_values=PAD_ID)


def decode(model, source: tf.Tensor, max_length: int, search: Greedy | BeamSearch = Greedy()) -> Hypotheses:
    """Decodes `source` (B, Ts) with `model` and `search`; see the module docstring.

    Args:
        model: what `start_decoding(source, length)` and `step(token_ids, positions, cache, context)` can be
            asked of: an `EncoderDecoder`, a `DecoderOnly`, or `Uncached(model)`.
        max_length: the most output tokens of any sentence.
    """
    batch, width = tf.shape(source)[0], tf.convert_to_tensor(search.width, tf.int32)
    limits, steps = output_limits(source, max_length)  # (B,), ()
    cache, context, first = model.start_decoding(source, steps)
    rows = lambda x: tf.repeat(x, width, axis=0)  # noqa: E731 - (B, ...) -> (B*K, ...), each sentence K times
    cache, context, first = tf.nest.map_structure(rows, (cache, context, first))
    one_alive = tf.concat([tf.zeros([batch, 1]), tf.fill([batch, width - 1], NEG_INF)], axis=1)  # (B, K)
    alive_ids, alive_scores = tf.zeros([batch, width, 0], tf.int32), one_alive
    finished_ids, finished_scores = tf.zeros([batch, width, 0], tf.int32), tf.fill([batch, width], NEG_INF)
    done = tf.zeros([batch], tf.bool)
    token = tf.fill([batch * width], BOS_ID)  # (B*K,)
    for t in tf.range(steps):
        tf.autograph.experimental.set_loop_options(  # sequences grow; a width given as a tensor is unknown
            shape_invariants=[
                (x, tf.nest.map_structure(lambda y: tf.TensorShape([None] * y.shape.rank), x))
                for x in (alive_ids, alive_scores, finished_ids, finished_scores, token, done, cache)
            ]
        )
        logits, cache = model.step(token, first + t, cache, context)  # (B*K, V)
        log_probs = tf.nn.log_softmax(tf.cast(logits, tf.float32))  # (B*K, V)
        vocab = tf.shape(log_probs)[1]
        totals = tf.reshape(tf.reshape(alive_scores, [-1, 1]) + log_probs, [batch, width * vocab])  # (B, K*V)
        scores, indices = search.candidates(totals)  # (B, M), best first
        origin, token_ids = indices // vocab, indices % vocab  # (B, M): the alive hypothesis extended, by what
        ids = tf.concat([tf.gather(alive_ids, origin, batch_dims=1), token_ids[:, :, None]], axis=2)  # (B, M, t+1)
        ends = tf.equal(token_ids, EOS_ID)  # (B, M)
        at_limit = (t + 1 >= limits)[:, None]  # (B, 1): every hypothesis ends here
        among_best = tf.range(tf.shape(scores)[1])[None, :] < width  # (B, M)
        finishing = (ends | at_limit) & among_best & ~done[:, None] & (scores > NEG_INF)  # (B, M)
        penalised = scores / length_penalty(t + 1, search.length_penalty)
        candidates = tf.where(finishing, penalised, NEG_INF)  # (B, M)
        pooled_ids = tf.concat([_pad_to(finished_ids, t + 1), ids], axis=1)  # (B, K+M, t+1)
        finished_scores, kept = tf.math.top_k(tf.concat([finished_scores, candidates], axis=1), k=width)  # (B, K)
        finished_ids = tf.gather(pooled_ids, kept, batch_dims=1)  # (B, K, t+1)
        alive_scores, kept = tf.math.top_k(tf.where(ends, NEG_INF, scores), k=width)  # (B, K)
        alive_ids = tf.gather(ids, kept, batch_dims=1)  # (B, K, t+1)
        token = tf.reshape(tf.gather(token_ids, kept, batch_dims=1), [-1])  # (B*K,)
        if not (isinstance(search.width, int) and search.width == 1):  # one hypothesis a sentence stays in its row
            parents = tf.reshape(tf.range(batch)[:, None] * width + tf.gather(origin, kept, batch_dims=1), [-1])
            cache = tf.nest.map_structure(lambda x, rows=parents: tf.gather(x, rows), cache)  # rows (B*K,)
        found = tf.reduce_sum(tf.cast(finished_scores > NEG_INF, tf.int32), axis=1)  # (B,)
        done = done | (found >= width) | at_limit[:, 0]
        if tf.reduce_all(done):
            break
    return Hypotheses(finished_ids, finished_scores)


class Uncached:
    """An `EncoderDecoder` decoded by rerunning its whole decoder over the prefix at every step, with no key/value
    cache: the reference the cached steps are checked and timed against."""

    def __init__(self, model):
        self.model = model

    def start_decoding(self, source: tf.Tensor, length: tf.Tensor) -> tuple[tf.Tensor, dict, tf.Tensor]:
        memory, source_mask = self.model.encode(source, training=False)
        prefix = tf.zeros([tf.shape(source)[0], 0], tf.int32)  # (B, 0): the tokens fed so far
        return prefix, {"memory": memory, "source_mask": source_mask}, tf.zeros_like(source[:, 0])

    def step(self, token_ids, positions, prefix, context) -> tuple[tf.Tensor, tf.Tensor]:
        prefix = tf.concat([prefix, token_ids[:, None]], axis=1)  # (N, t+1)
        logits = self.model.decode(prefix, context["memory"], context["source_mask"], training=False)
        return logits[:, -1], prefix


def cross_attention(model, source: tf.Tensor, output: tf.Tensor) -> tf.Tensor:
    """Cross-attention weights (L, H, Tt, Ts) of one sentence: source (1, Ts), its output ids (1, Tt)."""
    target = tf.concat([tf.fill([1, 1], BOS_ID), output[:, :-1]], axis=1)  # teacher-forced on the output
    memory, source_mask = model.encode(source, training=False)
    _, weights = model.decode(target, memory, source_mask, training=False, return_attention=True)
    return weights[:, 0]  # (L, H, Tt, Ts)
