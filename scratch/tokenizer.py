"""Tokenizers that live inside the saved model, so that it takes raw strings.

Both turn a batch of strings (B,) into token ids (B, T): T is the longest text of the batch cut to
`max_length`, padding is id 0 after the real tokens, and an empty text becomes one unknown token so that
every row has at least one real position. A text longer than `max_length` keeps its head, or with `long_text`
`head-tail` (and `chunks`, whose windows are cut outside the graph: `scratch.pipeline.windows`) its first quarter
and last three quarters (`core.long_text.head_tail`), cut inside the graph so that a saved model does the same.

Called with a second batch of strings, the texts of a pair task, both give one sequence per pair,
`text [SEP] text_pair`, of at most `max_length` ids: when the two are too long together, the longer text is cut
first (the tokenizers library's `longest_first` truncation, as the fine-tuned side cuts pairs; `pair_lengths`).
The model tells the two texts apart by the separator (`scratch.embedding.segment_ids`). A text can never give
the separator's id: the words tokenizer strips the brackets of `[SEP]`, and WordPiece splits them off.

- `WordTokenizer`: lowercased words without punctuation, a vocabulary adapted on the train split only.
- `WordPieceTokenizer`: the pretrained checkpoint's uncased WordPiece vocabulary through tensorflow-text, so
  that the two sides can be compared with the same tokenizer.
"""

from __future__ import annotations

from pathlib import Path

import tensorflow as tf

from core.long_text import DEFAULT_READING, HEAD, READINGS, Reading, head_tail
from scratch.config import PAD, SEPARATOR, TOKENIZERS, WORD_RESERVED, WORD_UNKNOWN

__all__ = [
    "PAD",
    "SEPARATOR",
    "TOKENIZERS",
    "WORD_RESERVED",
    "WORD_UNKNOWN",
    "WordPieceTokenizer",
    "WordTokenizer",
    "make_tokenizer",
    "pair_lengths",
]
WORDPIECE_RESERVED = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def pair_lengths(first: int, second: int, max_length: int) -> tuple[int, int]:
    """How many tokens of each text of a pair `text [SEP] text_pair` keeps within `max_length` ids.

    The tokenizers library's `longest_first` (the fine-tuned side's cut): when the two do not fit, the shorter text
    (the first on a tie) is kept whole if it takes at most half the room, else cut to half (rounded down), and the
    longer text gets the rest.

    >>> pair_lengths(3, 4, 10), pair_lengths(20, 3, 10), pair_lengths(2, 20, 10), pair_lengths(20, 20, 10)
    ((3, 4), (6, 3), (2, 7), (4, 5))
    """
    budget = max_length - 1  # the separator's place
    if first + second <= budget:
        return first, second
    shorter = min(first, second, budget // 2)
    return (shorter, budget - shorter) if first <= second else (budget - shorter, shorter)


def _pair_ids(first: tf.RaggedTensor, second: tf.RaggedTensor, separator_id: int, max_length: int) -> tf.Tensor:
    """(B, None) ragged ids of two texts -> (B, T) dense ids of `first [SEP] second` cut as `pair_lengths` says."""
    first_lengths, second_lengths = first.row_lengths(), second.row_lengths()  # (B,) each
    budget = tf.cast(max_length - 1, tf.int64)
    fits, first_shorter = first_lengths + second_lengths <= budget, first_lengths <= second_lengths  # (B,) each
    shorter = tf.minimum(tf.minimum(first_lengths, second_lengths), budget // 2)  # (B,)
    kept_first = tf.where(fits, first_lengths, tf.where(first_shorter, shorter, budget - shorter))  # (B,)
    kept_second = tf.where(fits, second_lengths, tf.where(first_shorter, budget - shorter, shorter))  # (B,)
    first = tf.ragged.boolean_mask(first, tf.ragged.range(first_lengths) < kept_first[:, None])
    second = tf.ragged.boolean_mask(second, tf.ragged.range(second_lengths) < kept_second[:, None])
    separator = tf.fill([tf.shape(first_lengths)[0], 1], tf.cast(separator_id, first.dtype))  # (B, 1)
    return tf.concat([first, separator, second], axis=1).to_tensor(default_value=0)  # (B, T), T >= 1


def _pad_and_cut(ragged: tf.RaggedTensor, max_length: int, unknown_id: int, long_text: str = HEAD) -> tf.Tensor:
    """(B, None) ragged ids -> (B, T) dense ids, cut to `max_length` (`cut`), padded with 0, no empty row."""
    ragged = cut(ragged, max_length, long_text)
    lengths = ragged.row_lengths()  # (B,)
    ids = ragged.to_tensor(default_value=0)  # (B, T0), T0 may be 0
    ids = tf.pad(ids, [[0, 0], [0, 1]])[:, : tf.maximum(tf.shape(ids)[1], 1)]  # (B, T), T >= 1
    first = tf.where(lengths > 0, ids[:, 0], tf.cast(unknown_id, ids.dtype))  # (B,)
    return tf.concat([first[:, None], ids[:, 1:]], axis=1)  # (B, T)


def cut(ragged: tf.RaggedTensor, max_length: int, long_text: str = HEAD) -> tf.RaggedTensor:
    """(B, None) ragged ids -> each row's first `max_length` ids (`head`), or its head and tail
    (`core.long_text.head_tail`): a row that fits is kept whole."""
    if long_text == HEAD:
        return ragged[:, :max_length]
    head, tail = head_tail(max_length + 1, max_length, max_length)  # the same split for every longer row
    lengths = ragged.row_lengths()[:, None]  # (B, 1)
    positions = tf.ragged.range(ragged.row_lengths())  # (B, None)
    keep = (lengths <= max_length) | (positions < head) | (positions >= lengths - tail)  # (B, None)
    return tf.ragged.boolean_mask(ragged, keep)


@tf.keras.saving.register_keras_serializable(package="scratch")
class WordTokenizer(tf.keras.layers.Layer):
    """Lowercased, punctuation-free words looked up in a fixed vocabulary (id 0 padding, id 1 unknown; for a pair
    task id 2 the separator).

    Args:
        vocabulary: the tokens in id order, starting with "" and "[UNK]" (as `adapt` produces it).
        max_length: texts (or pairs) are cut to this many tokens.
        long_text: how a longer text is cut (`core.long_text`); a model saved before the option read the head.
    """

    def __init__(self, vocabulary: list[str], max_length: int, long_text: str = HEAD, **kwargs):
        super().__init__(**kwargs)
        vocabulary = [str(token) for token in vocabulary]
        if tuple(vocabulary[: len(WORD_RESERVED)]) != WORD_RESERVED:
            raise ValueError(f"A word vocabulary must start with the reserved tokens {list(WORD_RESERVED)}.")
        self.vocabulary = vocabulary
        self.max_length = max_length
        self.long_text = _checked(long_text)
        self.vectorize = tf.keras.layers.TextVectorization(vocabulary=vocabulary, ragged=True, name="vectorize")

    @classmethod
    def adapt(cls, texts: list[str], vocab_size: int, max_length: int, pairs: bool = False, **kwargs) -> WordTokenizer:
        """A tokenizer whose vocabulary is the most frequent words of `texts` after the reserved tokens, `vocab_size`
        in all; with `pairs`, the separator is reserved too, as id 2."""
        reserved = (*WORD_RESERVED, SEPARATOR) if pairs else WORD_RESERVED
        if vocab_size <= len(reserved):
            raise ValueError(
                f"vocab_size {vocab_size} leaves no room for words after the {len(reserved)} reserved tokens "
                f"{list(reserved)}; use at least {len(reserved) + 1}."
            )
        if not texts:
            raise ValueError("Cannot build a word vocabulary from an empty train split.")
        vectorize = tf.keras.layers.TextVectorization(max_tokens=vocab_size - len(reserved) + len(WORD_RESERVED))
        vectorize.adapt(tf.data.Dataset.from_tensor_slices(tf.constant(texts, tf.string)).batch(1024))
        words = vectorize.get_vocabulary()[len(WORD_RESERVED) :]
        return cls([*reserved, *words], max_length, **kwargs)

    def ragged_ids(self, texts: tf.Tensor) -> tf.RaggedTensor:
        """Each text's ids, uncut: (B,) strings -> (B, None)."""
        return self.vectorize(texts)

    def call(self, texts: tf.Tensor, text_pairs: tf.Tensor | None = None) -> tf.Tensor:
        return _tokenize(self, texts, text_pairs)  # (B, T)

    @property
    def unknown_id(self) -> int:
        return 1

    @property
    def separator_id(self) -> int | None:
        """The separator's id, or None for a vocabulary built without it (single texts)."""
        return self.vocabulary.index(SEPARATOR) if SEPARATOR in self.vocabulary else None

    def get_config(self):
        return {**super().get_config(), **_config(self)}


@tf.keras.saving.register_keras_serializable(package="scratch")
class WordPieceTokenizer(tf.keras.layers.Layer):
    """BERT's uncased tokenizer: lowercase, strip accents, split words and punctuation, then WordPiece (`##`).

    Args:
        vocabulary: the WordPiece vocabulary in id order; "[PAD]" must be id 0.
        max_length: texts are cut to this many tokens.
        long_text: how a longer text is cut (`core.long_text`); a model saved before the option read the head.
    """

    def __init__(self, vocabulary: list[str], max_length: int, long_text: str = HEAD, **kwargs):
        super().__init__(**kwargs)
        import tensorflow_text as tf_text  # only this tokenizer needs it

        vocabulary = [str(token) for token in vocabulary]
        missing = [token for token in WORDPIECE_RESERVED[:2] if token not in vocabulary]
        if missing or vocabulary[0] != "[PAD]":
            raise ValueError(f"A WordPiece vocabulary needs [PAD] at id 0 and an [UNK] token; missing {missing}.")
        self.vocabulary = vocabulary
        self.max_length = max_length
        self.long_text = _checked(long_text)
        lookup = tf.lookup.StaticVocabularyTable(
            tf.lookup.KeyValueTensorInitializer(vocabulary, tf.range(len(vocabulary), dtype=tf.int64)),
            num_oov_buckets=1,
        )
        self.bert = tf_text.BertTokenizer(lookup, lower_case=True, token_out_type=tf.int64, unknown_token="[UNK]")

    @classmethod
    def from_file(cls, path: str | Path, max_length: int, **kwargs) -> WordPieceTokenizer:
        path = Path(path)
        if not path.is_file():
            raise ValueError(f"WordPiece vocabulary {path} does not exist.")
        return cls(path.read_text(encoding="utf-8").splitlines(), max_length, **kwargs)

    @property
    def unknown_id(self) -> int:
        return self.vocabulary.index("[UNK]")

    @property
    def separator_id(self) -> int | None:
        return self.vocabulary.index(SEPARATOR) if SEPARATOR in self.vocabulary else None

    def ragged_ids(self, texts: tf.Tensor) -> tf.RaggedTensor:
        """Each text's piece ids, uncut: (B,) strings -> (B, None)."""
        return self.bert.tokenize(texts).merge_dims(1, 2)  # (B, words, pieces) -> (B, None)

    def call(self, texts: tf.Tensor, text_pairs: tf.Tensor | None = None) -> tf.Tensor:
        return _tokenize(self, texts, text_pairs)  # (B, T)

    def get_config(self):
        return {**super().get_config(), **_config(self)}


def _checked(long_text: str) -> str:
    if long_text not in READINGS:
        raise ValueError(f"long_text must be one of {', '.join(READINGS)}, got {long_text!r}.")
    return long_text


def _config(tokenizer: WordTokenizer | WordPieceTokenizer) -> dict:
    """What both tokenizers add to a layer's config."""
    return {"vocabulary": tokenizer.vocabulary, "max_length": tokenizer.max_length, "long_text": tokenizer.long_text}


def _tokenize(
    tokenizer: WordTokenizer | WordPieceTokenizer, texts: tf.Tensor, text_pairs: tf.Tensor | None
) -> tf.Tensor:
    """Both tokenizers' `call`: (B,) texts, and for a pair task (B,) second texts, -> (B, T) ids."""
    if text_pairs is None:
        ids = tokenizer.ragged_ids(texts)  # (B, None)
        return _pad_and_cut(ids, tokenizer.max_length, tokenizer.unknown_id, tokenizer.long_text)
    if tokenizer.separator_id is None:
        raise ValueError(f"This tokenizer's vocabulary has no {SEPARATOR} token; it was built for single texts.")
    first, second = tokenizer.ragged_ids(texts), tokenizer.ragged_ids(text_pairs)
    return _pair_ids(first, second, tokenizer.separator_id, tokenizer.max_length)


def make_tokenizer(
    kind: str,
    train_texts: list[str],
    vocab_size: int,
    max_length: int,
    pairs: bool = False,
    reading: Reading = DEFAULT_READING,
) -> tf.keras.layers.Layer:
    """The tokenizer named by `--tokenizer`: words adapted on `train_texts` (for a pair task both texts of every
    pair, with the separator reserved), or the packaged WordPiece vocabulary; cutting long texts as `reading` says."""
    options = {"name": "tokenizer", "long_text": reading.long_text}
    if kind == "words":
        return WordTokenizer.adapt(train_texts, vocab_size, max_length, pairs=pairs, **options)
    if kind == "wordpiece":
        from core.pretrained import packaged_minilm

        return WordPieceTokenizer.from_file(packaged_minilm() / "vocab.txt", max_length, **options)
    raise ValueError(f"tokenizer must be one of {', '.join(TOKENIZERS)}, got {kind!r}.")
