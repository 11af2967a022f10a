from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from core.long_text import CHUNKS, HEAD, HEAD_TAIL, Reading
from finetune.pipeline import (
    Encoded,
    bucket_ids,
    encode,
    eval_dataset,
    pad,
    steps_per_epoch,
    train_dataset,
)
from tests.conftest import separable_rows
from tests.finetune.tiny import make_tiny_bert


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(make_tiny_bert(tmp_path_factory.mktemp("tok")))


def _encoded(lengths: list[int]) -> Encoded:
    # Row i holds the value i+1 repeated, so a row can be recognised after shuffling and padding with 0.
    return Encoded([np.full(n, i + 1, dtype=np.int32) for i, n in enumerate(lengths)], truncated=0)


def test_encode_cuts_long_texts_keeping_the_end_token(tokenizer) -> None:
    texts = ["a great film", "a great film " * 10]
    full = tokenizer(texts)["input_ids"]
    encoded = encode(tokenizer, texts, max_length=8, reading=Reading(HEAD))
    assert encoded.truncated == 1
    assert encoded.ids[0].tolist() == full[0]
    assert encoded.ids[1].tolist() == full[1][:7] + [tokenizer.sep_token_id]
    assert encoded.lengths.tolist() == [len(full[0]), 8]


def long_text(words: int) -> str:
    """A text of `words` distinct-looking pieces from the tiny vocabulary, so that a cut is visible."""
    vocabulary = ["the", "film", "movie", "not", "very", "and", "it", "was", "a"]
    return " ".join(vocabulary[i % len(vocabulary)] for i in range(words))


def test_head_tail_keeps_the_first_quarter_and_last_three_quarters_between_cls_and_sep(tokenizer) -> None:
    texts = [long_text(300), "a great film"]
    full = tokenizer(texts)["input_ids"]
    pieces = full[0][1:-1]
    encoded = encode(tokenizer, texts, max_length=64)  # head-tail by default: 16 + 46 of the 62 places
    assert encoded.ids[0].tolist() == [tokenizer.cls_token_id, *pieces[:16], *pieces[-46:], tokenizer.sep_token_id]
    assert encoded.ids[1].tolist() == full[1]  # a short text is left as it was
    assert encoded.truncated == 1 and encoded.documents is None and encoded.pieces.tolist() == [300, 3]


def test_short_texts_give_the_same_ids_under_head_and_head_tail(tokenizer) -> None:
    texts = [text for text, _ in separable_rows(50)]  # SST-2-like sentences, shorter than the window
    head = encode(tokenizer, texts, max_length=32, reading=Reading(HEAD))
    head_tail = encode(tokenizer, texts, max_length=32, reading=Reading(HEAD_TAIL))
    assert [row.tolist() for row in head.ids] == [row.tolist() for row in head_tail.ids]


def test_chunks_give_every_window_each_between_cls_and_sep_and_training_gives_each_its_label(tokenizer) -> None:
    texts = ["a great film", long_text(100)]
    pieces = tokenizer(texts)["input_ids"][1][1:-1]
    reading = Reading(CHUNKS, stride=4, train_chunks=True)
    encoded = encode(tokenizer, texts, max_length=34, reading=reading, windows=True)  # windows of 32 pieces
    assert encoded.documents.tolist() == [0, 1, 1, 1, 1]
    windows = [row.tolist()[1:-1] for row in encoded.ids[1:]]
    assert windows == [pieces[0:32], pieces[28:60], pieces[56:88], pieces[84:100]]
    assert all(row[0] == tokenizer.cls_token_id and row[-1] == tokenizer.sep_token_id for row in encoded.ids)
    labels = [label for _, label in train_dataset(encoded, np.array([0, 1]), 8, 34, 0, seed=0).unbatch()]
    assert sorted(int(y) for y in labels) == [0, 1, 1, 1, 1]
    validated = [label for _, label in eval_dataset(encoded, np.array([0, 1]), 8, 0).unbatch()]
    assert sorted(int(y) for y in validated) == [0, 1, 1, 1, 1]  # validated as trained: window by window


def test_train_batches_hold_similar_lengths_padded_to_their_longest() -> None:
    rng = np.random.default_rng(0)
    lengths = rng.integers(3, 60, size=203).tolist()
    encoded = _encoded(lengths)
    labels = np.arange(203) % 3
    dataset = train_dataset(encoded, labels, batch_size=16, max_length=64, pad_id=0, seed=1)

    seen = Counter()
    batches = 0
    for features, label in dataset:
        ids, mask = features["input_ids"].numpy(), features["attention_mask"].numpy()
        row_lengths = mask.sum(axis=1)
        assert ids.shape[1] == row_lengths.max()  # padded to its own longest row, not to max_length
        assert len(set(bucket_ids(row_lengths, 64))) == 1  # one length bucket per batch
        assert ((ids != 0) == mask.astype(bool)).all()
        for row, n, y in zip(ids, row_lengths, label.numpy()):
            index = row[0] - 1
            assert n == lengths[index] and y == labels[index]
            seen[index] += 1
        batches += 1
    assert seen == Counter(range(203))  # every example exactly once per epoch
    assert batches == steps_per_epoch(np.array(lengths), 16, 64) == dataset.cardinality().numpy()
    assert dataset.options().autotune.enabled is False  # its thread can hold up the end of an epoch


def test_training_order_is_reshuffled_each_epoch_and_repeats_with_the_seed() -> None:
    encoded = _encoded([5] * 64)

    def epochs(seed: int) -> list[list[int]]:
        dataset = train_dataset(encoded, np.zeros(64, dtype=np.int64), 8, 16, 0, seed)
        return [[int(b[0]["input_ids"][j, 0]) for b in dataset for j in range(len(b[1]))] for _ in range(2)]

    first, again = epochs(7), epochs(7)
    assert first == again
    assert first[0] != first[1]
    assert sorted(first[0]) == sorted(first[1])


def test_eval_dataset_runs_in_length_order_with_its_labels() -> None:
    lengths = [9, 2, 30, 4, 4]
    dataset = eval_dataset(_encoded(lengths), np.array([0, 1, 2, 3, 4]), batch_size=2, pad_id=0)
    rows = [
        (int(m.sum()), int(y)) for f, labels in dataset for m, y in zip(f["attention_mask"].numpy(), labels.numpy())
    ]
    assert rows == [(2, 1), (4, 3), (4, 4), (9, 0), (30, 2)]


def test_pad_masks_exactly_the_real_tokens() -> None:
    ids, mask = pad([np.array([5, 6, 7]), np.array([8])], pad_id=0)
    assert ids.tolist() == [[5, 6, 7], [8, 0, 0]]
    assert mask.tolist() == [[1, 1, 1], [1, 0, 0]]
