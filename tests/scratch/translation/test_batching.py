"""Token-count batches and the shapes of the training examples."""

from __future__ import annotations

import numpy as np

from scratch.translation.batching import decoder_only_example, encoder_decoder_example, token_batches
from scratch.translation.tokenizer import BOS_ID, EOS_ID


def test_every_row_once_and_every_batch_within_the_token_budget():
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 60, size=500)
    batches = token_batches(lengths, 256, np.random.default_rng(1))
    rows = np.concatenate(batches)
    assert sorted(rows.tolist()) == list(range(500))
    for batch in batches:
        assert len(batch) * lengths[batch].max() <= 256
    spread = [lengths[b].max() - lengths[b].min() for b in batches]
    assert np.mean(spread) < 5  # similar lengths travel together


def test_a_row_longer_than_the_budget_goes_alone():
    batches = token_batches(np.array([3, 500, 4]), 64)
    assert [b.tolist() for b in batches] == [[0, 2], [1]]


def test_encoder_decoder_example_shifts_the_target_behind_the_start_id():
    (source, target_in), labels = encoder_decoder_example([np.array([5, 6, EOS_ID])], [np.array([7, 8])])
    assert source.tolist() == [[5, 6, EOS_ID]]
    assert target_in.tolist() == [[BOS_ID, 7, 8]]
    assert labels.tolist() == [[7, 8, EOS_ID]]


def test_decoder_only_labels_only_the_target():
    sequence, labels = decoder_only_example(
        [np.array([5, 6, EOS_ID]), np.array([9, EOS_ID])], [np.array([7, 8]), np.array([4])]
    )
    assert sequence.tolist() == [[5, 6, EOS_ID, BOS_ID, 7, 8], [9, EOS_ID, BOS_ID, 4, 0, 0]]
    assert labels.tolist() == [[0, 0, 0, 7, 8, EOS_ID], [0, 0, 4, EOS_ID, 0, 0]]
