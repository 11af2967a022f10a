"""The joint SentencePiece vocabulary: exactly reversible, reserved ids where the model expects them."""

from __future__ import annotations

import csv

import numpy as np
import pandas as pd
import pytest
import tensorflow as tf

from scratch.translation.tokenizer import (
    BOS_ID,
    EOS_ID,
    MIN_VOCAB_SIZE,
    PAD_ID,
    UNK_ID,
    SubwordTokenizer,
    VocabularyError,
    encode_source,
    train_sentencepiece,
)
from tests.scratch.translation.toy import toy_pairs

AWKWARD = ["  leading and  double spaces ", "tab\tinside", "日本語 ☃ emoji 🙂", '"quoted" start', "", "É Ü ç ã õ"]


@pytest.fixture(scope="module")
def toy_tokenizer() -> SubwordTokenizer:
    pairs = toy_pairs(300)
    return SubwordTokenizer(train_sentencepiece([p[0] for p in pairs] + [p[1] for p in pairs], 300))


def _round_trip(tokenizer: SubwordTokenizer, texts: list[str]) -> list[str]:
    ids = tokenizer.tokenize(tf.constant(texts)).to_tensor(PAD_ID)
    return [t.decode("utf-8") for t in tokenizer.detokenize(ids).numpy()]


def test_reserved_ids_are_pad_unknown_start_end(toy_tokenizer):
    pieces = toy_tokenizer.pieces(tf.constant([PAD_ID, UNK_ID, BOS_ID, EOS_ID])).numpy().tolist()
    assert pieces == [b"<pad>", b"<unk>", b"<s>", b"</s>"]
    assert MIN_VOCAB_SIZE <= toy_tokenizer.vocab_size <= 300


def test_detokenize_inverts_tokenize_even_for_unseen_characters(toy_tokenizer):
    assert _round_trip(toy_tokenizer, AWKWARD) == AWKWARD
    ids = toy_tokenizer.tokenize(tf.constant(["日本語"])).flat_values.numpy()
    assert UNK_ID not in ids  # byte fallback, never the unknown id


def test_detokenize_stops_at_the_end_id_and_skips_padding(toy_tokenizer):
    ids = toy_tokenizer.tokenize(tf.constant(["gato sol", "mar"])).to_tensor(PAD_ID).numpy()
    rows = np.concatenate([ids, np.full([2, 1], EOS_ID), ids[:, :1]], axis=1)  # anything after the end id is ignored
    assert [t.decode() for t in toy_tokenizer.detokenize(rows).numpy()] == ["gato sol", "mar"]


def test_encode_source_ends_every_row_with_the_end_id_within_max_length(toy_tokenizer):
    ids = encode_source(toy_tokenizer, tf.constant(["gato sol mar " * 10, "rio"]), 8).numpy()
    assert ids.shape[1] == 8
    assert ids[0, -1] == EOS_ID
    assert list(ids[1]).index(EOS_ID) == int((ids[1] != PAD_ID).sum()) - 1


def test_a_vocabulary_smaller_than_the_reserved_ids_is_refused():
    with pytest.raises(VocabularyError, match=f"use at least {MIN_VOCAB_SIZE}"):
        train_sentencepiece(["gato sol"], 3)


def test_a_preset_size_grows_to_hold_every_character_and_a_given_size_fails_with_the_size_to_use():
    # 400 distinct characters (CJK ideographs) need more pieces than 300.
    texts = [" ".join(chr(0x4E00 + (i * 7 + j) % 400) for j in range(12)) for i in range(400)]
    with pytest.raises(VocabularyError, match=r"pass --vocab-size (\d+) or more") as refused:
        train_sentencepiece(texts, 300)
    grown = SubwordTokenizer(train_sentencepiece(texts, 300, grow=True))
    assert 300 < grown.vocab_size <= refused.value.suggested
    ids = grown.tokenize(tf.constant(texts[:3]))
    assert [t.decode() for t in grown.detokenize(ids.to_tensor()).numpy()] == texts[:3]


def test_the_pt_en_test_sources_round_trip_exactly(pt_en_dir):
    read = lambda split: pd.read_csv(  # noqa: E731
        pt_en_dir / f"{split}.tsv", sep="\t", quoting=csv.QUOTE_NONE, dtype=object, keep_default_na=False
    )
    train, test = read("train"), read("test")
    tokenizer = SubwordTokenizer(train_sentencepiece(list(train.pt[:4000]) + list(train.en[:4000]), 2000))
    for column in ("pt", "en"):
        texts = list(test[column])
        assert _round_trip(tokenizer, texts) == texts
