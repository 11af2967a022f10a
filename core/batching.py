"""Length-bucketed batches, the classifiers' training batches on both sides: texts of similar length grouped,
each batch padded to its own longest text, so short texts do not pay for `--max-length` positions."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import tensorflow as tf

from core.training.budget import bucketed_steps


def length_buckets(
    dataset: tf.data.Dataset,
    lengths: np.ndarray,
    boundaries: Sequence[int],
    batch_size: int,
    padding_values=None,
) -> tf.data.Dataset:
    """Batches of up to `batch_size` elements of `dataset` whose first component's length falls between the same two
    `boundaries`, each padded (with `padding_values`, default 0) to its own longest.

    `lengths` are the elements' lengths, from which the batch count (`core.training.budget.bucketed_steps`) is told to
    tf.data: a known epoch length lets Keras end each epoch without a last, failing call to the train step, which
    would still advance the optimizer's step count (and so the schedule and the step budget) by one.
    """
    dataset = dataset.bucket_by_sequence_length(
        lambda first, *rest: tf.shape(first)[0],
        list(boundaries),
        [batch_size] * (len(boundaries) + 1),
        padding_values=padding_values,
    )
    return dataset.apply(tf.data.experimental.assert_cardinality(bucketed_steps(lengths, boundaries, batch_size)))
