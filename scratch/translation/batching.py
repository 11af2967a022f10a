"""Token-count batches: pairs of similar length grouped so that each padded batch holds about `max_tokens`.

Pairs are sorted by length (ties broken at random per epoch), cut into batches whose row count times longest
row stays within the budget, and the batches shuffled; short sentences thus travel in large batches and
nothing is padded to a global maximum.
"""

from __future__ import annotations

from collections.abc import Callable

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


def pair_lengths(arch: str, sources: list[np.ndarray], targets: list[np.ndarray]) -> np.ndarray:
    """The padded width each pair needs in a batch of `arch`."""
    if arch == "decoder-only":
        return np.asarray([len(s) + len(t) + 1 for s, t in zip(sources, targets)])
    return np.asarray([max(len(s), len(t) + 1) for s, t in zip(sources, targets)])


def padded(rows: list[np.ndarray]) -> np.ndarray:
    """Rows of ids -> (N, longest) int32, padded with 0."""
    out = np.zeros([len(rows), max(map(len, rows))], np.int32)
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return out


def pad_batch(arch: str, sources: list[np.ndarray], targets: list[np.ndarray], rows: np.ndarray):
    """The model's input and labels for pairs `rows`: encoder-decoder ((source (B, S), target behind the start id
    (B, T)), labels (B, T)); decoder-only (`source, start id, target` (B, L), labels (B, L) with 0 over the source)."""
    if arch == "decoder-only":
        inputs = [np.concatenate([sources[i], [BOS_ID], targets[i]]) for i in rows]
        labels = [np.concatenate([np.zeros(len(sources[i]), np.int32), targets[i], [EOS_ID]]) for i in rows]
        return padded(inputs), padded(labels)
    source = padded([sources[i] for i in rows])
    target_in = padded([np.concatenate([[BOS_ID], targets[i]]) for i in rows])
    return (source, target_in), padded([np.concatenate([targets[i], [EOS_ID]]) for i in rows])


def batch_signature(arch: str):
    """The `tf.TensorSpec` structure of `pad_batch`'s batches."""
    ids = tf.TensorSpec([None, None], tf.int32)
    return (ids, ids) if arch == "decoder-only" else ((ids, ids), ids)


def evaluation_dataset(arch: str, sources: list[np.ndarray], targets: list[np.ndarray], max_tokens: int):
    """One pass over the pairs in length order (the least padding), as a `tf.data.Dataset` of `pad_batch` batches."""
    batches = token_batches(pair_lengths(arch, sources, targets), max_tokens)
    dataset = tf.data.Dataset.from_generator(
        lambda: (pad_batch(arch, sources, targets, rows) for rows in batches), output_signature=batch_signature(arch)
    )
    return prefetched(dataset.apply(tf.data.experimental.assert_cardinality(len(batches))))


class TokenBatchStream(tf.keras.callbacks.Callback):
    """The training batches: an endless stream of passes over the training pairs, each pass drawn anew from
    (seed, pass) (its segmentations, with subword sampling, its ties and its batch order), so that the stream's
    batch number s is the same whenever it is drawn.

    Step s of training trains on batch s: as a callback, the stream learns at the first epoch how many steps the
    (restored) run has taken and starts there, so a resumed run continues with the batch the interruption left.

    Args:
        arch: the model's arch (`pad_batch`).
        pass_pairs: `pass_pairs(n)`, the tokenised (sources, targets) of pass n (from 1).
        max_tokens: the token budget of a batch (`token_batches`).
        seed: the run's seed.
    """

    def __init__(
        self,
        arch: str,
        pass_pairs: Callable[[int], tuple[list[np.ndarray], list[np.ndarray]]],
        max_tokens: int,
        seed: int,
    ) -> None:
        super().__init__()
        self.arch, self.pass_pairs, self.max_tokens, self.seed = arch, pass_pairs, max_tokens, seed
        self.start: int | None = None
        self.rows: dict[int, int] = {}  # step -> pairs in its batch, as drawn
        self._drawn: tuple[int, tuple, list[np.ndarray]] | None = None

    def draw(self, number: int) -> tuple[tuple[list[np.ndarray], list[np.ndarray]], list[np.ndarray]]:
        """Pass `number`'s pairs and its batches (row indices), the last pass drawn kept."""
        if self._drawn is None or self._drawn[0] != number:
            pairs = self.pass_pairs(number)
            rng = np.random.default_rng([self.seed, number])
            self._drawn = (number, pairs, token_batches(pair_lengths(self.arch, *pairs), self.max_tokens, rng))
        return self._drawn[1], self._drawn[2]

    @property
    def steps_per_pass(self) -> int:
        """The first pass's batches (without subword sampling, every pass's)."""
        return len(self.draw(1)[1])

    def dataset(self) -> tf.data.Dataset:
        """The stream as an endless `tf.data.Dataset` of `pad_batch` batches."""
        dataset = tf.data.Dataset.from_generator(self._batches, output_signature=batch_signature(self.arch))
        return prefetched(dataset.apply(tf.data.experimental.assert_cardinality(tf.data.INFINITE_CARDINALITY)))

    def _batches(self):
        if self.start is None:
            raise RuntimeError("the training stream was read before training began")
        number, offset, step = 1, self.start, self.start
        while offset >= len(self.draw(number)[1]):
            offset -= len(self.draw(number)[1])
            number += 1
        while True:
            (sources, targets), batches = self.draw(number)
            for rows in batches[offset:]:
                self.rows[step] = len(rows)
                step += 1
                yield pad_batch(self.arch, sources, targets, rows)
            number, offset = number + 1, 0

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        if self.start is None:  # BackupAndRestore has restored the step count by now
            self.start = int(self.model.optimizer.iterations.numpy())

    def examples(self, first: int, last: int) -> int:
        """The pairs of the batches of steps `first` to `last` (the training log's `examples`)."""
        return sum(self.rows[step] for step in range(first, last))
