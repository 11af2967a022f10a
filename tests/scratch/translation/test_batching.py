"""Token-count batches and the shapes of the training examples."""

from __future__ import annotations

import numpy as np
import pytest
import sentencepiece as spm

from scratch.translation.batching import (
    TokenBatchStream,
    evaluation_dataset,
    pad_batch,
    sample_pairs,
    token_batches,
    tokenize_pairs,
)
from scratch.translation.tokenizer import BOS_ID, EOS_ID, PREFIX, SubwordTokenizer, train_sentencepiece
from tests.scratch.translation.toy import toy_pairs


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
    dataset = evaluation_dataset(arch, [np.array(s) for s in sources], [np.array(t) for t in targets], max_tokens)
    return list(dataset.as_numpy_iterator())


def test_encoder_decoder_batches_shift_the_target_behind_the_start_id():
    [((source, target_in), labels)] = batches_of("encoder-decoder", [[5, 6, EOS_ID], [9, EOS_ID]], [[7, 8], [4]])
    assert source.tolist() == [[9, EOS_ID, 0], [5, 6, EOS_ID]]  # length order, padded with 0
    assert target_in.tolist() == [[BOS_ID, 4, 0], [BOS_ID, 7, 8]]
    assert labels.tolist() == [[4, EOS_ID, 0], [7, 8, EOS_ID]]


def test_decoder_only_labels_only_the_target():
    [(sequence, labels)] = batches_of("decoder-only", [[5, 6, EOS_ID], [9, EOS_ID]], [[7, 8], [4]])
    assert sequence.tolist() == [[9, EOS_ID, BOS_ID, 4, 0, 0], [5, 6, EOS_ID, BOS_ID, 7, 8]]
    assert labels.tolist() == [[0, 0, 4, EOS_ID, 0, 0], [0, 0, 0, 7, 8, EOS_ID]]


def _stream(sources, targets, max_tokens=64, seed=1):
    """A training stream over fixed pairs, as a run just started (step 0) would read it."""
    stream = TokenBatchStream("encoder-decoder", lambda number: (sources, targets), max_tokens, seed)
    stream.start = 0
    return stream


def _random_pairs(n=60):
    rng = np.random.default_rng(0)
    sources = [np.append(rng.integers(5, 50, size=k), EOS_ID) for k in rng.integers(1, 20, size=n)]
    targets = [rng.integers(5, 50, size=k) for k in rng.integers(0, 20, size=n)]
    return sources, targets


def test_each_pass_of_the_stream_yields_every_pair_once_within_the_token_budget():
    sources, targets = _random_pairs()
    stream = _stream(sources, targets)
    per_pass = stream.steps_per_pass
    batches = list(stream.dataset().take(3 * per_pass).as_numpy_iterator())
    expected = sorted(tuple(np.append(t, EOS_ID)) for t in targets)
    for number in range(3):
        seen = []
        for (source, _), labels in batches[number * per_pass : (number + 1) * per_pass]:
            assert source.size <= 64 or len(source) == 1
            seen += [tuple(row[row != 0]) for row in labels]
        assert sorted(seen) == expected
    assert stream.examples(0, 3 * per_pass) == 3 * len(targets)
    assert [len(labels) for _, labels in batches] == [stream.rows[s] for s in range(3 * per_pass)]
    first, second = ([labels.tolist() for _, labels in batches[n * per_pass : (n + 1) * per_pass]] for n in (0, 1))
    assert first != second  # each pass is batched and ordered anew
    assert stream.dataset().options().autotune.enabled is False  # its thread can hold up the end of an epoch


def test_the_stream_started_at_step_s_yields_the_batches_a_fresh_stream_yields_from_s():
    sources, targets = _random_pairs()
    fresh = list(_stream(sources, targets).dataset().take(40).as_numpy_iterator())
    resumed = _stream(sources, targets)
    resumed.start = 23  # as a resumed run at step 23 sets it: inside a later pass
    assert 23 > resumed.steps_per_pass
    for ((source, target_in), labels), ((s, t), y) in zip(resumed.dataset().take(17).as_numpy_iterator(), fresh[23:]):
        np.testing.assert_array_equal(source, s)
        np.testing.assert_array_equal(target_in, t)
        np.testing.assert_array_equal(labels, y)


def test_a_stream_read_before_training_began_is_refused():
    sources, targets = _random_pairs(5)
    stream = TokenBatchStream("encoder-decoder", lambda number: (sources, targets), 64, 0)
    with pytest.raises(Exception, match="the training stream was read before training began"):
        next(iter(stream.dataset()))


def test_pad_batch_gathers_the_rows_asked_for_in_their_order():
    sources = [np.array([5, EOS_ID]), np.array([6, 7, EOS_ID]), np.array([8, EOS_ID])]
    targets = [np.array([9]), np.array([10, 11]), np.array([12, 13, 14])]
    (source, target_in), labels = pad_batch("encoder-decoder", sources, targets, np.array([2, 0]))
    assert source.tolist() == [[8, EOS_ID], [5, EOS_ID]]
    assert target_in.tolist() == [[BOS_ID, 12, 13, 14], [BOS_ID, 9, 0, 0]]
    assert labels.tolist() == [[12, 13, 14, EOS_ID], [9, EOS_ID, 0, 0]]


@pytest.fixture(scope="module")
def toy_proto() -> bytes:
    pairs = toy_pairs(300)
    return train_sentencepiece([p[0] for p in pairs] + [p[1] for p in pairs], 300)


def _same_rows(a, b) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def test_sampled_segmentations_decode_to_the_texts_and_repeat_with_the_seed(toy_proto):
    sources = ["o gato come o peixe", "  duas  casas ", "café à noite", "rio"]
    targets = ["the cat eats the fish", "two houses", "coffee at night", ""]
    processor = spm.SentencePieceProcessor(model_proto=toy_proto)
    first = sample_pairs(toy_proto, sources * 25, targets * 25, 64, 0.1, seed=3)
    for source, target, text, translation in zip(*first, sources * 25, targets * 25, strict=True):
        assert source[-1] == EOS_ID and processor.decode(source[:-1].tolist()) == PREFIX + text
        assert processor.decode(target.tolist()) == PREFIX + translation
    again = sample_pairs(toy_proto, sources * 25, targets * 25, 64, 0.1, seed=3)
    other = sample_pairs(toy_proto, sources * 25, targets * 25, 64, 0.1, seed=4)
    assert _same_rows(first[0], again[0]) and _same_rows(first[1], again[1])
    assert not _same_rows(first[0], other[0])
    best = tokenize_pairs(SubwordTokenizer(toy_proto), sources * 25, targets * 25, 64)
    assert sum(map(len, first[0])) > sum(map(len, best[0]))  # sampling splits words finer than the best path


def test_sampling_at_a_high_alpha_gives_the_in_graph_tokenizer_rows(toy_proto):
    pairs = toy_pairs(80, seed=9)
    sources, targets = [p[0] for p in pairs], [p[1] + " e mais palavras" * 3 for p in pairs]
    best = tokenize_pairs(SubwordTokenizer(toy_proto), sources, targets, 12)
    sampled = sample_pairs(toy_proto, sources, targets, 12, 1000.0, seed=0)  # all mass on the best segmentation
    assert _same_rows(best[0], sampled[0]) and _same_rows(best[1], sampled[1])
    assert max(map(len, sampled[0])) <= 12 and max(map(len, sampled[1])) <= 11
