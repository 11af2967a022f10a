"""Length-bucketed batches: each text once, grouped between two boundaries, padded to the batch's own longest, and
as many batches as the budget counts."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from core.batching import length_buckets
from core.training.budget import bucketed_steps


def test_batches_group_texts_between_two_boundaries_and_hold_each_once():
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 30, size=101)
    rows = tf.RaggedTensor.from_row_lengths(np.arange(1, lengths.sum() + 1, dtype=np.int32), lengths)
    dataset = tf.data.Dataset.from_tensor_slices((rows, np.arange(101, dtype=np.int32))).map(
        lambda r, i: (tf.convert_to_tensor(r), i)
    )
    boundaries = [4, 8, 16]
    batches = list(length_buckets(dataset, lengths, boundaries, 8, (-1, 0)).as_numpy_iterator())
    assert len(batches) == bucketed_steps(lengths, boundaries, 8)
    assert int(length_buckets(dataset, lengths, boundaries, 8).cardinality()) == len(batches)  # told to tf.data
    seen = []
    for ids, index in batches:
        real = (ids != -1).sum(axis=1)
        np.testing.assert_array_equal(real, lengths[index])  # each row is its own text, padded with -1
        assert ids.shape[1] == real.max() and len(index) <= 8
        assert len(set(np.searchsorted(boundaries, real, side="right"))) == 1  # one bucket a batch
        seen += index.tolist()
    assert sorted(seen) == list(range(101))
