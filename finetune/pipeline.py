"""Input pipeline: tokenise each split once, then batch texts of similar length, each batch padded to its own
longest text, so short sentences do not pay for 128 positions.

The datasets carry variable-length rows (a `tf.RaggedTensor` sliced per text) and are traced once: the
padded sequence dimension is unknown to the graph, so a new batch length does not retrace the model.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import tensorflow as tf

from core.batching import length_buckets
from core.budget import bucketed_steps
from core.runtime import prefetched

logger = logging.getLogger(__name__)

# Bucket edges in tokens: a batch holds texts whose lengths fall between two neighbouring edges.
BOUNDARIES = (8, 12, 16, 20, 24, 32, 40, 48, 64, 80, 96, 128, 160, 192, 256, 320, 384, 448, 512)


@dataclass
class Encoded:
    """Token ids of one split, one int32 array per text, each ending with the tokenizer's end token."""

    ids: list[np.ndarray]
    truncated: int

    @property
    def lengths(self) -> np.ndarray:
        return np.fromiter((len(x) for x in self.ids), dtype=np.int64, count=len(self.ids))


def encode(tokenizer, texts: list[str], max_length: int) -> Encoded:
    """Tokenises `texts` in one batched call of the fast tokenizer and cuts each to `max_length` tokens.

    Texts are cut keeping their final special token ([SEP]), and the number cut is returned so the caller
    can report it.
    """
    ids = tokenizer(
        list(texts), truncation=False, return_attention_mask=False, return_token_type_ids=False, verbose=False
    )["input_ids"]
    truncated = 0
    out = []
    for row in ids:
        if len(row) > max_length:
            truncated += 1
            row = row[: max_length - 1] + row[-1:]
        out.append(np.asarray(row, dtype=np.int32))
    return Encoded(out, truncated)


def bucket_ids(lengths: np.ndarray, max_length: int) -> np.ndarray:
    """Which length bucket each text falls in (the rule `bucket_by_sequence_length` applies)."""
    return np.searchsorted(_boundaries(max_length), lengths, side="right")


def _boundaries(max_length: int) -> list[int]:
    return [b for b in BOUNDARIES if b <= max_length]


def steps_per_epoch(lengths: np.ndarray, batch_size: int, max_length: int) -> int:
    """Batches per epoch of `train_dataset`: every bucket ends with one partial batch."""
    return bucketed_steps(lengths, _boundaries(max_length), batch_size)


def _rows(encoded: Encoded, order: np.ndarray | None = None) -> tf.RaggedTensor:
    ids = encoded.ids if order is None else [encoded.ids[i] for i in order]
    lengths = np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(ids))
    return tf.RaggedTensor.from_row_lengths(np.concatenate(ids), lengths)


def _with_mask(ids: tf.Tensor, label: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    # A row of a ragged tensor arrives as a ragged value of rank 0; padded batching needs a plain tensor.
    ids = tf.convert_to_tensor(ids)
    return ids, tf.ones_like(ids), label


def _features(ids: tf.Tensor, mask: tf.Tensor, label: tf.Tensor) -> tuple[dict[str, tf.Tensor], tf.Tensor]:
    return {"input_ids": ids, "attention_mask": mask}, label  # (B, T), (B, T), (B,)


def train_dataset(
    encoded: Encoded, labels: np.ndarray, batch_size: int, max_length: int, pad_id: int, seed: int
) -> tf.data.Dataset:
    """Shuffled every epoch (seeded), grouped by length, each batch padded to its longest text."""
    rows = _rows(encoded)
    dataset = tf.data.Dataset.from_tensor_slices((rows, labels.astype(np.int32)))
    dataset = dataset.shuffle(len(encoded.ids), seed=seed, reshuffle_each_iteration=True).map(_with_mask)
    dataset = length_buckets(dataset, encoded.lengths, _boundaries(max_length), batch_size, (pad_id, 0, 0))
    return prefetched(dataset.map(_features))


def eval_dataset(encoded: Encoded, labels: np.ndarray, batch_size: int, pad_id: int) -> tf.data.Dataset:
    """In length order (the least padding), for validation during training."""
    order = np.argsort(encoded.lengths, kind="stable")
    rows = _rows(encoded, order)
    dataset = tf.data.Dataset.from_tensor_slices((rows, labels[order].astype(np.int32))).map(_with_mask)
    dataset = dataset.padded_batch(batch_size, padding_values=(pad_id, 0, 0)).map(_features)
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
