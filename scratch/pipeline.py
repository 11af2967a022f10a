"""Input pipeline: tokenise each split once, then batch texts of similar length, each batch padded to its own
longest text, so short sentences do not pay for `--max-length` positions.

The training batches come from `bucket_by_sequence_length` with an unknown sequence length, so the model is
traced once; validation logits are computed over length-sorted batches the same way.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from core.batching import length_buckets
from core.classifier import predict_in_batches
from core.long_text import Reading
from core.runtime import prefetched
from core.training.budget import bucketed_steps


def tokenize(
    tokenizer: tf.keras.layers.Layer, texts: list[str], text_pairs: list[str] | None = None, chunk: int = 2048
) -> list[np.ndarray]:
    """Each text's (or with `text_pairs`, each pair's `text [SEP] text_pair`) token ids without padding (at least one
    id; at most the tokenizer's max_length)."""
    rows: list[np.ndarray] = []
    for start in range(0, len(texts), chunk):
        batch = [tf.constant(texts[start : start + chunk], tf.string)]
        if text_pairs is not None:
            batch.append(tf.constant(text_pairs[start : start + chunk], tf.string))
        ids = tokenizer(*batch).numpy()  # (B, T)
        lengths = (ids != 0).sum(axis=1)
        rows.extend(row[:n] for row, n in zip(ids, lengths))
    return rows


def windows(
    tokenizer: tf.keras.layers.Layer, texts: list[str], reading: Reading, chunk: int = 2048
) -> tuple[list[np.ndarray], np.ndarray]:
    """Each text's windows of at most the tokenizer's max_length ids as `reading` spans them (one, cut head-tail
    by the layer's own rule, unless it reads in chunks), and each window's text (W,) int64.

    An empty text is one unknown id, as the layer gives it.
    """
    rows: list[np.ndarray] = []
    documents: list[int] = []
    size = tokenizer.max_length
    for start in range(0, len(texts), chunk):
        pieces = tokenizer.ragged_ids(tf.constant(texts[start : start + chunk], tf.string))  # (B, None)
        for offset, row in enumerate(pieces.numpy()):
            row = np.asarray(row, np.int64) if len(row) else np.asarray([tokenizer.unknown_id], np.int64)
            for first, last in reading.spans(len(row), size):
                rows.append(np.asarray(reading.cut(row[first:last], size, size), np.int64))
                documents.append(start + offset)
    return rows, np.asarray(documents, np.int64)


def training_rows(
    tokenizer: tf.keras.layers.Layer,
    texts: list[str],
    text_pairs: list[str] | None,
    targets: np.ndarray,
    reading: Reading,
) -> tuple[list[np.ndarray], np.ndarray]:
    """The rows training reads and their targets: each text (pair) cut by the tokenizer, or with `--train-chunks`
    every window of each text with the text's target."""
    if not reading.windows_for_training():
        return tokenize(tokenizer, texts, text_pairs), targets
    rows, documents = windows(tokenizer, texts, reading)
    return rows, targets[documents]


def mean_length(ids: list[np.ndarray]) -> float:
    return float(np.mean([len(row) for row in ids])) if ids else 0.0


def bucket_boundaries(max_length: int) -> list[int]:
    """Length limits of the batching buckets: fine for short texts, coarser for long ones."""
    bounds, edge = [], 4
    while edge < max_length:
        bounds.append(edge)
        edge += max(2, edge // 4)
    return bounds


def steps_per_epoch(ids: list[np.ndarray], batch_size: int, max_length: int) -> int:
    """Batches per epoch of `grouped_batches` over `ids`: every length bucket ends with a partial batch."""
    lengths = np.array([len(row) for row in ids], dtype=np.int64)
    return bucketed_steps(lengths, bucket_boundaries(max_length), batch_size)


def grouped_batches(
    ids: list[np.ndarray], targets: np.ndarray, batch_size: int, max_length: int, shuffle_seed: int | None = None
) -> tf.data.Dataset:
    """Batches of texts of similar length, each padded (with id 0) to its own longest text, with their targets
    (N, ...): one-hot, multi-hot or packed rows (N, D), or values (N,). Yields (token ids (B, T), targets (B, ...)).

    With `shuffle_seed`, the texts are reshuffled every epoch (seeded) before being grouped by length.
    """
    lengths = np.array([len(row) for row in ids], dtype=np.int32)
    padded = np.zeros([len(ids), max(lengths, default=1)], np.int64)  # (N, T_max), cut per text below
    for i, row in enumerate(ids):
        padded[i, : len(row)] = row
    dataset = tf.data.Dataset.from_tensor_slices((padded, lengths, targets))
    dataset = dataset.map(lambda row, length, target: (row[:length], target))  # (T_i,), (D,) or ()
    if shuffle_seed is not None:
        dataset = dataset.shuffle(len(ids), seed=shuffle_seed, reshuffle_each_iteration=True)
    return prefetched(length_buckets(dataset, lengths, bucket_boundaries(max_length), batch_size))


def predict_logits(classifier: tf.keras.Model, ids: list[np.ndarray], batch_size: int = 64) -> np.ndarray:
    """Logits (n, K) in the order of `ids`, computed on length-sorted batches padded to their own length."""
    forward = tf.function(
        lambda batch: classifier(batch, training=False),
        input_signature=[tf.TensorSpec([None, None], tf.int64)],
    )

    def predict(rows: list[np.ndarray]) -> np.ndarray:
        batch = np.zeros([len(rows), max(len(row) for row in rows)], np.int64)
        for i, row in enumerate(rows):
            batch[i, : len(row)] = row
        return forward(tf.constant(batch)).numpy()

    return predict_in_batches(predict, ids, batch_size, classifier.output_shape[-1])
