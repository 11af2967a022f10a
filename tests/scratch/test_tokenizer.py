import numpy as np
import pytest
import tensorflow as tf

from core.pretrained import packaged_minilm
from scratch.tokenizer import WordPieceTokenizer, WordTokenizer, make_tokenizer, pair_lengths

TRAIN = ["The film was great", "a great, GREAT cast!", "dull film"]


def ids(tokenizer, texts):
    return tokenizer(tf.constant(texts, tf.string)).numpy()


def test_words_vocabulary_comes_from_train_only_and_unknown_words_map_to_one():
    tokenizer = WordTokenizer.adapt(TRAIN, vocab_size=100, max_length=16)
    vocabulary = tokenizer.vocabulary
    assert vocabulary[:3] == ["", "[UNK]", "great"]  # most frequent word first
    assert set(vocabulary[2:]) == {"the", "film", "was", "great", "a", "cast", "dull"}
    out = ids(tokenizer, ["Great cast, awful plot", "film"])
    index = {token: i for i, token in enumerate(vocabulary)}
    np.testing.assert_array_equal(out, [[index["great"], index["cast"], 1, 1], [index["film"], 0, 0, 0]])


def test_words_vocabulary_is_cut_to_vocab_size_including_reserved_tokens():
    tokenizer = WordTokenizer.adapt(TRAIN, vocab_size=4, max_length=8)
    assert tokenizer.vocabulary == ["", "[UNK]", "great", "film"]


def test_texts_are_cut_to_max_length_padded_to_the_longest_and_never_empty():
    tokenizer = WordTokenizer.adapt(TRAIN, vocab_size=100, max_length=3)
    out = ids(tokenizer, ["the film was great indeed", "", "film"])
    assert out.shape == (3, 3)
    np.testing.assert_array_equal(out[1], [1, 0, 0])  # an empty text is one unknown token
    assert (out[2, 1:] == 0).all() and out[2, 0] > 1
    assert ids(tokenizer, [""]).shape == (1, 1)


@pytest.mark.parametrize("vocab_size", [1, 2])
def test_vocabulary_not_larger_than_the_reserved_tokens_is_refused(vocab_size):
    with pytest.raises(ValueError, match=f"vocab_size {vocab_size} leaves no room"):
        WordTokenizer.adapt(TRAIN, vocab_size=vocab_size, max_length=8)


def test_empty_train_texts_are_refused():
    with pytest.raises(ValueError, match="empty train split"):
        WordTokenizer.adapt([], vocab_size=10, max_length=8)


def test_words_config_round_trip_keeps_the_vocabulary():
    tokenizer = WordTokenizer.adapt(TRAIN, vocab_size=100, max_length=5)
    clone = WordTokenizer.from_config(tokenizer.get_config())
    texts = ["a dull, great film", "was"]
    np.testing.assert_array_equal(ids(clone, texts), ids(tokenizer, texts))


def test_wordpiece_matches_the_reference_bert_tokenizer():
    from transformers import BertTokenizer

    vocab = packaged_minilm() / "vocab.txt"
    reference = BertTokenizer(str(vocab), do_lower_case=True)
    tokenizer = make_tokenizer("wordpiece", [], vocab_size=3, max_length=64)
    texts = ["Un-be-LIEVABLY good!!", "Café crème, naïve résumé", "it 's a charming journey ."]
    out = ids(tokenizer, texts)
    for row, text in zip(out, texts):
        expected = reference.encode(text, add_special_tokens=False)
        np.testing.assert_array_equal(row[: len(expected)], expected)
        assert (row[len(expected) :] == 0).all()
    clone = WordPieceTokenizer.from_config(tokenizer.get_config())
    np.testing.assert_array_equal(ids(clone, texts), out)
    assert ids(tokenizer, [""])[0, 0] == tokenizer.vocabulary.index("[UNK]")


def test_unknown_tokenizer_is_refused():
    with pytest.raises(ValueError, match="tokenizer must be one of words, wordpiece"):
        make_tokenizer("chars", TRAIN, vocab_size=10, max_length=8)


@pytest.mark.slow
def test_wordpiece_model_saves_and_reloads_with_frozen_checkpoint_embeddings(tmp_path):
    from scratch.model import ModelConfig, build_classifier, build_end_to_end

    tokenizer = make_tokenizer("wordpiece", [], vocab_size=3, max_length=16)
    config = ModelConfig(
        vocab_size=10, num_layers=1, d_model=8, num_heads=2, d_ff=8, tokenizer="wordpiece", embeddings="minilm"
    )
    model = build_end_to_end(tokenizer, build_classifier(config, vocab_size=len(tokenizer.vocabulary)))
    texts = tf.constant(["Unbelievably good!", "naïve"])
    model.save(tmp_path / "model.keras")
    reloaded = tf.keras.models.load_model(tmp_path / "model.keras", compile=False, safe_mode=True)
    np.testing.assert_allclose(reloaded(texts).numpy(), model(texts).numpy(), atol=1e-6)


def test_pair_lengths_are_the_fast_bert_tokenizer_s_longest_first_cut():
    from transformers import BertTokenizerFast

    reference = BertTokenizerFast.from_pretrained(str(packaged_minilm()))
    for max_length in (2, 3, 4, 7, 10):
        for first in range(9):
            for second in range(1, 9):  # transformers reads an empty second text as none
                # one piece per word; [CLS] and a second [SEP] besides the model's sequence
                ids = reference(
                    " ".join("a" * first), " ".join("b" * second), truncation="longest_first", max_length=max_length + 2
                )["input_ids"]
                kept = ids.count(reference.convert_tokens_to_ids("a")), ids.count(reference.convert_tokens_to_ids("b"))
                assert pair_lengths(first, second, max_length) == kept, (first, second, max_length)


@pytest.mark.parametrize("kind", ["words", "wordpiece"])
def test_a_pair_is_one_sequence_joined_by_the_separator_and_cut_longest_first(kind):
    tokenizer = make_tokenizer(kind, TRAIN, vocab_size=100, max_length=7, pairs=True)
    words = ["the film was great", "dull", "a great cast", "", "film film film film film film film film"]
    pairs = [(a, b) for a in words for b in words]
    out = ids_of_pairs(tokenizer, pairs)
    uncut = {text: tokenizer.ragged_ids(tf.constant([text]))[0].numpy() for text in words}  # an empty text: none
    for row, (a, b) in zip(out, pairs):
        first, second = uncut[a], uncut[b]
        kept = pair_lengths(len(first), len(second), 7)
        expected = [*first[: kept[0]], tokenizer.separator_id, *second[: kept[1]]]
        np.testing.assert_array_equal(row[: len(expected)], expected)
        assert (row[len(expected) :] == 0).all()


def ids_of_pairs(tokenizer, pairs):
    texts, text_pairs = zip(*pairs)
    return tokenizer(tf.constant(texts, tf.string), tf.constant(text_pairs, tf.string)).numpy()


def test_a_pair_word_vocabulary_reserves_the_separator_as_id_2_within_vocab_size():
    tokenizer = WordTokenizer.adapt(TRAIN, vocab_size=5, max_length=8, pairs=True)
    assert tokenizer.vocabulary == ["", "[UNK]", "[SEP]", "great", "film"]
    assert tokenizer.separator_id == 2
    assert WordTokenizer.adapt(TRAIN, vocab_size=5, max_length=8).separator_id is None
    with pytest.raises(ValueError, match=r"vocab_size 3 leaves no room for words after the 3 reserved tokens"):
        WordTokenizer.adapt(TRAIN, vocab_size=3, max_length=8, pairs=True)
    with pytest.raises(ValueError, match=r"has no \[SEP\] token; it was built for single texts"):
        WordTokenizer.adapt(TRAIN, vocab_size=5, max_length=8)(tf.constant(["a"]), tf.constant(["b"]))


@pytest.mark.parametrize("kind", ["words", "wordpiece"])
def test_no_text_gives_the_separator_s_id(kind):
    tokenizer = make_tokenizer(kind, [*TRAIN, "sep SEP [SEP]"], vocab_size=100, max_length=32, pairs=True)
    out = ids_of_pairs(tokenizer, [("a [SEP] b [sep]", "[SEP]"), ("[SEP][SEP]", "x")])
    assert ((out == tokenizer.separator_id).sum(axis=1) == 1).all()


def test_wordpiece_pairs_match_the_reference_bert_tokenizer_s_longest_first_truncation():
    from transformers import BertTokenizerFast

    reference = BertTokenizerFast.from_pretrained(str(packaged_minilm()))
    tokenizer = make_tokenizer("wordpiece", [], vocab_size=3, max_length=12, pairs=True)
    texts = ["Un-be-LIEVABLY good!!", "Café crème", "it 's a charming and often affecting journey .", "short"]
    pairs = [(a, b) for a in texts for b in texts]
    for row, (a, b) in zip(ids_of_pairs(tokenizer, pairs), pairs):
        # [CLS] a [SEP] b [SEP] in max_length + 2 ids: without the [CLS] and the last [SEP], the model's sequence
        expected = reference(a, b, truncation="longest_first", max_length=12 + 2)["input_ids"][1:-1]
        np.testing.assert_array_equal(row[: len(expected)], expected)
        assert (row[len(expected) :] == 0).all()


WORDS = [f"w{i}" for i in range(40)]  # one word each, so a text's ids are its words' in order


def word_ids(tokenizer, words: list[str]) -> list[int]:
    index = {token: i for i, token in enumerate(tokenizer.vocabulary)}
    return [index[word] for word in words]


@pytest.mark.parametrize("kind", ["words", "wordpiece"])
def test_head_tail_keeps_the_first_quarter_and_last_three_quarters_inside_the_graph(kind):
    tokenizer = make_tokenizer(kind, [" ".join(WORDS)], vocab_size=100, max_length=16)
    text = " ".join(WORDS[:30] if kind == "words" else ["film"] * 30)
    full = tokenizer.ragged_ids(tf.constant([text])).numpy()[0].tolist()
    assert tokenizer.long_text == "head-tail" and len(full) == 30
    out = ids(tokenizer, [text, "w1 w2"] if kind == "words" else [text, "film film"])
    assert out[0].tolist() == full[:4] + full[-12:]  # 4 + 12 of 16
    assert out[1].tolist()[:2] == ids(tokenizer, ["w1 w2" if kind == "words" else "film film"])[0].tolist()
    clone = type(tokenizer).from_config(tokenizer.get_config())
    np.testing.assert_array_equal(ids(clone, [text]), out[:1])


@pytest.mark.parametrize("long_text", ["head", "head-tail"])
def test_a_word_text_is_cut_by_its_reading_and_a_short_one_is_left_whole(long_text):
    tokenizer = WordTokenizer.adapt([" ".join(WORDS)], vocab_size=100, max_length=8, long_text=long_text)
    expected = word_ids(tokenizer, WORDS[:8] if long_text == "head" else WORDS[:2] + WORDS[-6:])
    assert ids(tokenizer, [" ".join(WORDS)])[0].tolist() == expected
    assert ids(tokenizer, ["w3 w5"])[0].tolist() == word_ids(tokenizer, ["w3", "w5"])


def test_a_tokenizer_saved_before_the_option_reads_the_head():
    tokenizer = WordTokenizer.adapt([" ".join(WORDS)], vocab_size=100, max_length=8, long_text="head-tail")
    config = tokenizer.get_config()
    del config["long_text"]  # as saved before
    old = WordTokenizer.from_config(config)
    assert ids(old, [" ".join(WORDS)])[0].tolist() == word_ids(old, WORDS[:8])


def test_short_texts_give_the_same_ids_under_head_and_head_tail():
    from tests.conftest import separable_rows

    texts = [text for text, _ in separable_rows(50)]
    head = WordTokenizer.adapt(texts, vocab_size=100, max_length=32, long_text="head")
    head_tail = WordTokenizer.from_config({**head.get_config(), "long_text": "head-tail"})
    np.testing.assert_array_equal(ids(head, texts), ids(head_tail, texts))


def test_windows_cover_the_text_and_training_rows_carry_their_text_s_label():
    from core.long_text import Reading
    from scratch.pipeline import training_rows, windows

    tokenizer = WordTokenizer.adapt([" ".join(WORDS)], vocab_size=100, max_length=16)
    reading = Reading("chunks", stride=4, train_chunks=True)
    rows, documents = windows(tokenizer, [" ".join(WORDS), "w7", ""], reading)
    assert documents.tolist() == [0, 0, 0, 1, 2]
    assert [row.tolist() for row in rows[:3]] == [
        word_ids(tokenizer, WORDS[start:end]) for start, end in [(0, 16), (12, 28), (24, 40)]
    ]
    assert rows[4].tolist() == [tokenizer.unknown_id]  # an empty text, as the layer gives it
    rows, targets = training_rows(tokenizer, [" ".join(WORDS), "w7"], None, np.array([1, 0]), reading)
    assert targets.tolist() == [1, 1, 1, 0] and len(rows) == 4
