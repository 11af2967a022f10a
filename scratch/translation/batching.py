"""Token-count batches: pairs of similar length grouped so that each padded batch holds about `max_tokens`.

Pairs are sorted by length (ties broken at random per epoch), cut into batches whose row count times longest
row stays within the budget, and the batches shuffled; short sentences thus travel in large batches and
nothing is padded to a global maximum.
"""

from __future__ import annotations

import numpy as np
import sentencepiece as spm
import tensorflow as tf

from core.runtime import prefetched
from scratch.translation.tokenizer import BOS_ID, EOS_ID, PAD_ID, PREFIX, SubwordTokenizer, encode_source

SAMPLING_NBEST = 64  # segmentations drawn from the 64 best, as in Kudo (2018)


def tokenize_pairs(
    tokenizer: SubwordTokenizer, sources: list[str], targets: list[str], max_length: int, chunk: int = 4096
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Source rows ending in the end id (at most `max_length`), target pieces (at most `max_length - 1`)."""
    source_rows: list[np.ndarray] = []
    target_rows: list[np.ndarray] = []
    for start in range(0, len(sources), chunk):
        ids = encode_source(tokenizer, tf.constant(sources[start : start + chunk]), max_length).numpy()
        source_rows.extend(row[row != PAD_ID] for row in ids)
        pieces = tokenizer.tokenize(tf.constant(targets[start : start + chunk]))[:, : max_length - 1]
        target_rows.extend(np.asarray(row, np.int32) for row in pieces.to_list())
    return source_rows, target_rows


def sample_pairs(
    model_proto: bytes, sources: list[str], targets: list[str], max_length: int, alpha: float, seed: int
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """`tokenize_pairs`' rows, each text segmented by a draw from its best segmentations (subword regularisation).

    Each text gets one of the unigram model's `SAMPLING_NBEST` best segmentations, drawn with probability
    proportional to its likelihood to the power `alpha`; every draw still decodes to the text. One thread, so
    that the same `seed` gives the same rows.
    """
    processor = spm.SentencePieceProcessor(model_proto=model_proto)
    spm.set_random_generator_seed(seed % 2**32)
    options = {"enable_sampling": True, "alpha": alpha, "nbest_size": SAMPLING_NBEST, "num_threads": 1}
    source_ids = processor.encode([PREFIX + text for text in sources], **options)
    target_ids = processor.encode([PREFIX + text for text in targets], **options)
    source_rows = [np.asarray(ids[: max_length - 1] + [EOS_ID], np.int32) for ids in source_ids]
    target_rows = [np.asarray(ids[: max_length - 1], np.int32) for ids in target_ids]
    return source_rows, target_rows


def token_batches(lengths: np.ndarray, max_tokens: int, rng: np.random.Generator | None = None) -> list[np.ndarray]:
    """Row indices per batch, each batch's rows * longest length <= max_tokens (a longer row goes alone).

    Without `rng` the batches come in length order, as evaluation wants; with it, ties are broken at
    random and the batch order is shuffled.
    """
    noise = rng.random(len(lengths)) if rng is not None else np.zeros(len(lengths))
    order = np.lexsort((noise, lengths))
    batches, current, longest = [], [], 0
    for index in order:
        longest_if_added = max(longest, int(lengths[index]))
        if current and longest_if_added * (len(current) + 1) > max_tokens:
            batches.append(np.asarray(current))
            current, longest_if_added = [], int(lengths[index])
        current.append(index)
        longest = longest_if_added
    if current:
        batches.append(np.asarray(current))
    if rng is not None:
        rng.shuffle(batches)
    return batches


def ragged(rows: list[np.ndarray]) -> tf.RaggedTensor:
    """Rows of ids -> a (N, None) int32 RaggedTensor."""
    values = np.concatenate(rows).astype(np.int32) if rows else np.zeros([0], np.int32)
    return tf.RaggedTensor.from_row_lengths(values, np.asarray([len(r) for r in rows], np.int64))


def encoder_decoder_tables(sources: list[np.ndarray], targets: list[np.ndarray]):
    """((source, target input), labels) of every pair, as (N, None) tables: the target behind the start id."""
    inputs = [np.concatenate([[BOS_ID], t]) for t in targets]
    labels = [np.concatenate([t, [EOS_ID]]) for t in targets]
    return (ragged(sources), ragged(inputs)), ragged(labels)


def decoder_only_tables(sources: list[np.ndarray], targets: list[np.ndarray]):
    """(sequence input, labels) of every pair, as (N, None) tables: `source, start id, target`, labels 0 over
    the source."""
    inputs = [np.concatenate([s, [BOS_ID], t]) for s, t in zip(sources, targets)]
    labels = [np.concatenate([np.zeros(len(s), np.int32), t, [EOS_ID]]) for s, t in zip(sources, targets)]
    return ragged(inputs), ragged(labels)


def pair_lengths(arch: str, sources: list[np.ndarray], targets: list[np.ndarray]) -> np.ndarray:
    """The padded width each pair needs in a batch of `arch`."""
    if arch == "decoder-only":
        return np.asarray([len(s) + len(t) + 1 for s, t in zip(sources, targets)])
    return np.asarray([max(len(s), len(t) + 1) for s, t in zip(sources, targets)])


def make_dataset(
    arch: str,
    sources: list[np.ndarray],
    targets: list[np.ndarray],
    max_tokens: int,
    rng: np.random.Generator | None = None,
) -> tuple[tf.data.Dataset, list[int]]:
    """The batches of one pass over the pairs as a `tf.data.Dataset`, and the row count of each.

    Each element gathers its batch's rows and pads them with 0 to the longest, inside the input graph: no
    Python runs while Keras iterates.
    """
    batches = token_batches(pair_lengths(arch, sources, targets), max_tokens, rng)
    tables = (decoder_only_tables if arch == "decoder-only" else encoder_decoder_tables)(sources, targets)
    sizes = [len(b) for b in batches]
    index = ragged(batches)  # (batches, None) row numbers

    def gather(batch: tf.Tensor):
        return tf.nest.map_structure(lambda table: tf.gather(table, batch).to_tensor(), tables)

    dataset = tf.data.Dataset.from_tensor_slices(index).map(gather)
    return prefetched(dataset), sizes
