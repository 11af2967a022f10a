"""Token-count batches and the shapes of the training examples."""

from __future__ import annotations

import numpy as np

from scratch.translation.batching import make_dataset, token_batches
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


def batches_of(arch, sources, targets, max_tokens=1000):
    dataset, sizes = make_dataset(arch, [np.array(s) for s in sources], [np.array(t) for t in targets], max_tokens)
    return list(dataset.as_numpy_iterator()), sizes


def test_encoder_decoder_batches_shift_the_target_behind_the_start_id():
    [((source, target_in), labels)], sizes = batches_of("encoder-decoder", [[5, 6, EOS_ID], [9, EOS_ID]], [[7, 8], [4]])
    assert sizes == [2]
    assert source.tolist() == [[9, EOS_ID, 0], [5, 6, EOS_ID]]  # length order, padded with 0
    assert target_in.tolist() == [[BOS_ID, 4, 0], [BOS_ID, 7, 8]]
    assert labels.tolist() == [[4, EOS_ID, 0], [7, 8, EOS_ID]]


def test_decoder_only_labels_only_the_target():
    [(sequence, labels)], _ = batches_of("decoder-only", [[5, 6, EOS_ID], [9, EOS_ID]], [[7, 8], [4]])
    assert sequence.tolist() == [[9, EOS_ID, BOS_ID, 4, 0, 0], [5, 6, EOS_ID, BOS_ID, 7, 8]]
    assert labels.tolist() == [[0, 0, 4, EOS_ID, 0, 0], [0, 0, 0, 7, 8, EOS_ID]]


def test_a_shuffled_pass_yields_every_pair_once_in_its_batches():
    rng = np.random.default_rng(0)
    sources = [np.append(rng.integers(5, 50, size=n), EOS_ID) for n in rng.integers(1, 20, size=60)]
    targets = [rng.integers(5, 50, size=n) for n in rng.integers(0, 20, size=60)]
    dataset, sizes = make_dataset("encoder-decoder", sources, targets, 64, np.random.default_rng(1))
    seen = []
    for ((source, _), labels), size in zip(dataset.as_numpy_iterator(), sizes, strict=True):
        assert len(source) == size and source.size <= 64 or size == 1
        seen += [tuple(row[row != 0]) for row in labels]
    assert sorted(seen) == sorted(tuple(np.append(t, EOS_ID)) for t in targets)
    assert dataset.options().autotune.enabled is False  # its thread can hold up the end of an epoch
