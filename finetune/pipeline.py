"""Input pipeline: tokenise each split once, then batch texts of similar length, each batch padded to its own
longest text, so short sentences do not pay for 128 positions.

A text longer than the window is read as `--long-text` says (`core.long_text`): its head, its head and tail (the
default), or in overlapping windows, each `[CLS] window [SEP]` (`Encoded.documents` says whose window each row is).
A pair task's two texts go through the tokenizer together, as transformers' `(text, text_pair)`: `[CLS] text [SEP]
text_pair [SEP]` with segment ids (`token_type_ids`) 0 for the first part and 1 for the second, cut to `--max-length`
the tokenizer's `longest_first` way (the longer text loses tokens first). Targets are any kind's
(`core.data.TaskData.targets`): class ids, multi-hot rows or values.

The datasets carry variable-length rows (a `tf.RaggedTensor` sliced per text) and are traced once: the
padded sequence dimension is unknown to the graph, so a new batch length does not retrace the model.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import tensorflow as tf

from core.batching import length_buckets
from core.long_text import DEFAULT_READING, Reading
from core.runtime import prefetched
from core.training.budget import bucketed_steps

logger = logging.getLogger(__name__)

# Bucket edges in tokens: a batch holds texts whose lengths fall between two neighbouring edges.
SPECIALS = 2  # [CLS] and [SEP] around a text's pieces
BOUNDARIES = (8, 12, 16, 20, 24, 32, 40, 48, 64, 80, 96, 128, 160, 192, 256, 320, 384, 448, 512)


@dataclass
class Encoded:
    """Token ids of one split, one int32 array per text (pair) or per window of a text, each ending with the
    tokenizer's end token; for a pair task each row's segment ids (`types`, None for single texts); read in windows,
    each row's text (`documents`, None when every row is a whole text, in order)."""

    ids: list[np.ndarray]
    truncated: int
    types: list[np.ndarray] | None = None
    documents: np.ndarray | None = None
    pieces: np.ndarray | None = None  # each text's length in pieces, specials left out, before any cut

    @property
    def lengths(self) -> np.ndarray:
        return np.fromiter((len(x) for x in self.ids), dtype=np.int64, count=len(self.ids))


def encode(
    tokenizer,
    texts: list[str],
    max_length: int,
    text_pairs: list[str] | None = None,
    reading: Reading = DEFAULT_READING,
    windows: bool = False,
) -> Encoded:
    """Tokenises `texts` (with `text_pairs`, each pair) in one batched call of the fast tokenizer and cuts each to
    `max_length` tokens.

    A text's special tokens ([CLS], [SEP]) are kept and its pieces cut between them as `reading` says (head, or head
    and tail); with `windows` and a reading in chunks, each text gives all its windows instead (`Encoded.documents`).
    Pairs are cut as the tokenizer's `longest_first` cuts them. The number of texts cut is returned so the caller
    can report it.
    """
    if text_pairs is not None:
        return _encode_pairs(tokenizer, list(texts), list(text_pairs), max_length)
    ids = tokenizer(
        list(texts), truncation=False, return_attention_mask=False, return_token_type_ids=False, verbose=False
    )["input_ids"]
    budget = max_length - SPECIALS
    rows, documents = [], []
    for document, row in enumerate(ids):
        start, pieces, end = row[:1], row[1:-1], row[-1:]
        spans = reading.spans(len(pieces), budget) if windows else [(0, len(pieces))]
        for first, last in spans:
            window = reading.cut(pieces[first:last], budget, max_length)
            rows.append(np.asarray([*start, *window, *end], dtype=np.int32))
            documents.append(document)
    pieces = np.fromiter((len(row) - SPECIALS for row in ids), dtype=np.int64, count=len(ids))
    chunked = np.asarray(documents, dtype=np.int64) if len(rows) != len(ids) else None
    return Encoded(rows, int((pieces > budget).sum()), documents=chunked, pieces=pieces)


def _encode_pairs(tokenizer, texts: list[str], pairs: list[str], max_length: int) -> Encoded:
    options = {"return_attention_mask": False, "return_token_type_ids": True, "verbose": False}
    encoded = tokenizer(texts, pairs, truncation=False, **options)
    ids, types = encoded["input_ids"], encoded["token_type_ids"]
    long = [i for i, row in enumerate(ids) if len(row) > max_length]
    if long:  # only these are tokenised again, cut
        cut = tokenizer(
            [texts[i] for i in long],
            [pairs[i] for i in long],
            truncation="longest_first",
            max_length=max_length,
            **options,
        )
        for i, row_ids, row_types in zip(long, cut["input_ids"], cut["token_type_ids"], strict=True):
            ids[i], types[i] = row_ids, row_types
    as_arrays = lambda rows: [np.asarray(row, dtype=np.int32) for row in rows]  # noqa: E731
    return Encoded(as_arrays(ids), len(long), as_arrays(types))


def bucket_ids(lengths: np.ndarray, max_length: int) -> np.ndarray:
    """Which length bucket each text falls in (the rule `bucket_by_sequence_length` applies)."""
    return np.searchsorted(_boundaries(max_length), lengths, side="right")


def _boundaries(max_length: int) -> list[int]:
    return [b for b in BOUNDARIES if b <= max_length]


def steps_per_epoch(lengths: np.ndarray, batch_size: int, max_length: int) -> int:
    """Batches per epoch of `train_dataset`: every bucket ends with one partial batch."""
    return bucketed_steps(lengths, _boundaries(max_length), batch_size)


def _ragged(rows: list[np.ndarray], order: np.ndarray | None = None) -> tf.RaggedTensor:
    rows = rows if order is None else [rows[i] for i in order]
    lengths = np.fromiter((len(x) for x in rows), dtype=np.int64, count=len(rows))
    return tf.RaggedTensor.from_row_lengths(np.concatenate(rows), lengths)


def _elements(encoded: Encoded, targets: np.ndarray, order: np.ndarray | None = None) -> tf.data.Dataset:
    """One element per example: (ids, [types,] mask, target), in `order` if given; with its padding values."""
    # class ids as int32 (as ever); multi-hot rows and values as float32
    targets = targets.astype(np.int32 if np.issubdtype(targets.dtype, np.integer) else np.float32)
    targets = targets if order is None else targets[order]
    columns = (_ragged(encoded.ids, order), *([] if encoded.types is None else [_ragged(encoded.types, order)]))

    def with_mask(*row: tf.Tensor) -> tuple[tf.Tensor, ...]:
        # A row of a ragged tensor arrives as a ragged value of rank 0; padded batching needs a plain tensor.
        *parts, target = (tf.convert_to_tensor(part) for part in row)
        return (*parts, tf.ones_like(parts[0]), target)

    return tf.data.Dataset.from_tensor_slices((*columns, targets)).map(with_mask)


def _padding(encoded: Encoded, dataset: tf.data.Dataset, pad_id: int) -> tuple:
    """The padding value of each component of `_elements`: the pad id, then zeros (segments, mask, target)."""
    target = dataset.element_spec[-1].dtype
    return (pad_id, *([0] if encoded.types is not None else []), 0, tf.constant(0, target))


def _features(*batch: tf.Tensor) -> tuple[dict[str, tf.Tensor], tf.Tensor]:
    *parts, mask, target = batch  # ids (B, T), [types (B, T),] mask (B, T), target (B,) or (B, L)
    names = ["input_ids", "token_type_ids"][: len(parts)]
    return {**dict(zip(names, parts, strict=True)), "attention_mask": mask}, target


def train_dataset(
    encoded: Encoded, targets: np.ndarray, batch_size: int, max_length: int, pad_id: int, seed: int
) -> tf.data.Dataset:
    """Shuffled every epoch (seeded), grouped by length, each batch padded to its longest text (pair); a text read
    in windows gives each window its target."""
    if encoded.documents is not None:
        targets = targets[encoded.documents]
    dataset = _elements(encoded, targets)
    padding = _padding(encoded, dataset, pad_id)
    dataset = dataset.shuffle(len(encoded.ids), seed=seed, reshuffle_each_iteration=True)
    dataset = length_buckets(dataset, encoded.lengths, _boundaries(max_length), batch_size, padding)
    return prefetched(dataset.map(_features))


def eval_dataset(encoded: Encoded, targets: np.ndarray, batch_size: int, pad_id: int) -> tf.data.Dataset:
    """In length order (the least padding), for validation during training; a text read in windows gives each window
    its target."""
    if encoded.documents is not None:
        targets = targets[encoded.documents]
    dataset = _elements(encoded, targets, np.argsort(encoded.lengths, kind="stable"))
    dataset = dataset.padded_batch(batch_size, padding_values=_padding(encoded, dataset, pad_id)).map(_features)
    return prefetched(dataset)


def pad(ids: list[np.ndarray], pad_id: int) -> tuple[np.ndarray, np.ndarray]:
    """Pads a batch to its longest row: (input_ids, attention_mask), both (B, T) int32."""
    width = max(len(x) for x in ids)
    input_ids = np.full((len(ids), width), pad_id, dtype=np.int32)
    mask = np.zeros((len(ids), width), dtype=np.int32)
    for i, row in enumerate(ids):
        input_ids[i, : len(row)] = row
        mask[i, : len(row)] = 1
    return input_ids, mask


def pad_types(types: list[np.ndarray], width: int) -> np.ndarray:
    """A pair batch's segment ids padded with 0 to `width`: (B, T) int32."""
    out = np.zeros((len(types), width), dtype=np.int32)
    for i, row in enumerate(types):
        out[i, : len(row)] = row
    return out
