"""Batched decoding: greedy with a key/value cache (and without, for checking), beam search, decoder-only greedy.

Every function takes source ids (B, Ts) as `tokenizer.encode_source` makes them and returns output ids
(B, T): the tokens up to and including each sentence's end id, then padding. A sentence stops at its end id
or after `output_limits` tokens, whichever comes first. All are written for `tf.function` (AutoGraph loops).
"""

from __future__ import annotations

import tensorflow as tf

from scratch.translation.config import DEFAULT_LENGTH_PENALTY
from scratch.translation.tokenizer import BOS_ID, EOS_ID, PAD_ID

LENGTH_RATIO = 1.5  # an output may run to 1.5 times its source, plus LENGTH_EXTRA tokens
LENGTH_EXTRA = 10
NEG = -1e9


def output_limits(source: tf.Tensor, max_length: int) -> tuple[tf.Tensor, tf.Tensor]:
    """Each sentence's most output tokens (B,) relative to its source length, capped at `max_length`; their max."""
    lengths = tf.reduce_sum(tf.cast(tf.not_equal(source, PAD_ID), tf.float32), axis=1)  # (B,)
    limits = tf.cast(tf.math.ceil(LENGTH_RATIO * lengths), tf.int32) + LENGTH_EXTRA
    limits = tf.minimum(limits, max_length)
    return limits, tf.reduce_max(limits)


def greedy_decode(model, source: tf.Tensor, max_length: int) -> tf.Tensor:
    """Greedy decoding of an `EncoderDecoder`, one position per step against the key/value caches."""
    memory, source_mask = model.encode(source, training=False)
    limits, steps = output_limits(source, max_length)
    cache = model.start_cache(memory, source_mask, steps)
    token = tf.fill([tf.shape(source)[0]], BOS_ID)  # (B,)
    done = tf.zeros_like(token, tf.bool)
    outputs = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
    for t in tf.range(steps):
        logits, cache = model.step(token, t, cache)  # (B, V)
        token = tf.where(done, PAD_ID, tf.argmax(logits, axis=-1, output_type=tf.int32))
        outputs = outputs.write(t, token)
        done = done | tf.equal(token, EOS_ID) | (t + 1 >= limits)
        if tf.reduce_all(done):
            break
    return tf.transpose(outputs.stack())  # (B, T)


def greedy_decode_uncached(model, source: tf.Tensor, max_length: int) -> tf.Tensor:
    """Greedy decoding that reruns the whole decoder over the prefix at every step (the cache's reference)."""
    memory, source_mask = model.encode(source, training=False)
    limits, steps = output_limits(source, max_length)
    target = tf.fill([tf.shape(source)[0], 1], BOS_ID)  # (B, 1)
    done = tf.zeros([tf.shape(source)[0]], tf.bool)
    for t in tf.range(steps):
        tf.autograph.experimental.set_loop_options(shape_invariants=[(target, tf.TensorShape([None, None]))])
        logits = model.decode(target, memory, source_mask, training=False)[:, -1]  # (B, V)
        token = tf.where(done, PAD_ID, tf.argmax(logits, axis=-1, output_type=tf.int32))
        target = tf.concat([target, token[:, None]], axis=1)
        done = done | tf.equal(token, EOS_ID) | (t + 1 >= limits)
        if tf.reduce_all(done):
            break
    return target[:, 1:]


def beam_search(
    model, source: tf.Tensor, max_length: int, beam: tf.Tensor | int, length_penalty: float = DEFAULT_LENGTH_PENALTY
) -> tf.Tensor:
    """Beam search of an `EncoderDecoder` with the key/value cache; the best beam by GNMT length penalty.

    A finished beam stays in the beam, extended only by padding at no cost; at the end each beam's summed
    log-probability is divided by ((5 + length) / 6) ** length_penalty and the best is returned.
    """
    batch, beam = tf.shape(source)[0], tf.convert_to_tensor(beam, tf.int32)
    memory, source_mask = model.encode(source, training=False)
    limits, steps = output_limits(source, max_length)
    memory, source_mask = tf.repeat(memory, beam, axis=0), tf.repeat(source_mask, beam, axis=0)  # (B*K, ...)
    limits = tf.repeat(limits, beam)  # (B*K,)
    cache = model.start_cache(memory, source_mask, steps)
    token = tf.fill([batch * beam], BOS_ID)
    done = tf.zeros_like(token, tf.bool)
    lengths = tf.zeros_like(token)
    scores = tf.concat([tf.zeros([batch, 1]), tf.fill([batch, beam - 1], NEG)], axis=1)  # (B, K): one live beam
    sequences = tf.zeros([batch * beam, 0], tf.int32)
    for t in tf.range(steps):
        tf.autograph.experimental.set_loop_options(
            shape_invariants=[(sequences, tf.TensorShape([None, None])), (scores, tf.TensorShape([None, None]))]
        )
        logits, cache = model.step(token, t, cache)  # (B*K, V)
        log_probs = tf.nn.log_softmax(tf.cast(logits, tf.float32))
        vocab = tf.shape(log_probs)[1]
        pad_only = tf.where(tf.range(vocab) == PAD_ID, 0.0, NEG)[None]  # (1, V)
        log_probs = tf.where(done[:, None], pad_only, log_probs)
        total = tf.reshape(tf.reshape(scores, [-1, 1]) + log_probs, [batch, beam * vocab])  # (B, K*V)
        scores, best = tf.math.top_k(total, k=beam)  # (B, K)
        origin = tf.reshape(tf.range(batch)[:, None] * beam + best // vocab, [-1])  # (B*K,) rows they extend
        token = tf.reshape(best % vocab, [-1])
        cache = {**cache, "self": [(tf.gather(k, origin), tf.gather(v, origin)) for k, v in cache["self"]]}
        sequences = tf.concat([tf.gather(sequences, origin), token[:, None]], axis=1)
        done, lengths = tf.gather(done, origin), tf.gather(lengths, origin)
        lengths += tf.cast(~done, tf.int32)
        done = done | tf.equal(token, EOS_ID) | (t + 1 >= limits)
        if tf.reduce_all(done):
            break
    penalty = tf.pow((5.0 + tf.cast(lengths, tf.float32)) / 6.0, length_penalty)  # (B*K,)
    normalised = scores / tf.reshape(penalty, [batch, beam])  # (B, K)
    pick = tf.range(batch) * beam + tf.argmax(normalised, axis=1, output_type=tf.int32)
    return tf.gather(sequences, pick)


def decoder_only_prompt(source: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
    """(B, Ts) source ids -> prompts (B, P) `source, start id` right-padded, and their lengths (B,)."""
    lengths = tf.reduce_sum(tf.cast(tf.not_equal(source, PAD_ID), tf.int32), axis=1)  # (B,)
    ragged = tf.RaggedTensor.from_tensor(source, lengths=lengths)
    starts = tf.RaggedTensor.from_tensor(tf.fill([tf.shape(source)[0], 1], BOS_ID))
    return tf.concat([ragged, starts], axis=1).to_tensor(PAD_ID), lengths + 1


def decoder_only_greedy(model, source: tf.Tensor, max_length: int) -> tf.Tensor:
    """Greedy decoding of a `DecoderOnly` model, one position per step against its key/value caches.

    Every row runs through the same positions: while a position is inside a row's prompt (source, start id)
    the row is fed its prompt token, and from its start id on, its own previous output. No position is ever
    padding, so the causal mask alone is right for every row.
    """
    prompt, prompt_lengths = decoder_only_prompt(source)  # (B, P), (B,)
    limits, steps = output_limits(source, max_length)
    first = prompt_lengths - 1  # each row's start id, whose next-token logits give its first output
    positions = tf.reduce_max(first + limits)
    prompt = tf.pad(prompt, [[0, 0], [0, positions + 1 - tf.shape(prompt)[1]]])  # a column for every position
    cache = model.start_cache(tf.shape(source)[0], positions)
    token = prompt[:, 0]  # (B,)
    done = tf.zeros_like(token, tf.bool)
    outputs = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
    for p in tf.range(positions):
        logits, cache = model.step(token, p, cache)  # (B, V)
        generating = p >= first  # (B,)
        chosen = tf.where(done | ~generating, PAD_ID, tf.argmax(logits, axis=-1, output_type=tf.int32))
        outputs = outputs.write(p, chosen)
        done = done | (generating & (tf.equal(chosen, EOS_ID) | (p - first + 1 >= limits)))
        token = tf.where(p + 1 < prompt_lengths, tf.gather(prompt, p + 1, axis=1), chosen)
        if tf.reduce_all(done):
            break
    written = tf.transpose(outputs.stack())  # (B, positions run)
    width = tf.reduce_max(first) + steps  # every row's outputs, and padding after them
    written = tf.pad(written, [[0, 0], [0, width - tf.shape(written)[1]]])
    return tf.gather(written, first[:, None] + tf.range(steps)[None], batch_dims=1)  # (B, steps)


def cross_attention(model, source: tf.Tensor, output: tf.Tensor) -> tf.Tensor:
    """Cross-attention weights (L, H, Tt, Ts) of one sentence: source (1, Ts), its output ids (1, Tt)."""
    target = tf.concat([tf.fill([1, 1], BOS_ID), output[:, :-1]], axis=1)  # teacher-forced on the output
    memory, source_mask = model.encode(source, training=False)
    _, weights = model.decode(target, memory, source_mask, training=False, return_attention=True)
    return weights[:, 0]  # (L, H, Tt, Ts)
