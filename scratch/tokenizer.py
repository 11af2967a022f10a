"""Tokenizers that live inside the saved model, so that it takes raw strings.

Both turn a batch of strings (B,) into token ids (B, T): T is the longest text of the batch cut to
`max_length`, padding is id 0 after the real tokens, and an empty text becomes one unknown token so that
every row has at least one real position.

- `WordTokenizer`: lowercased words without punctuation, a vocabulary adapted on the train split only.
- `WordPieceTokenizer`: the pretrained checkpoint's uncased WordPiece vocabulary through tensorflow-text, so
  that the two sides can be compared with the same tokenizer.
"""

from __future__ import annotations

from pathlib import Path

import tensorflow as tf

from scratch.config import PAD, TOKENIZERS, WORD_RESERVED, WORD_UNKNOWN

__all__ = [
    "PAD",
    "TOKENIZERS",
    "WORD_RESERVED",
    "WORD_UNKNOWN",
    "WordPieceTokenizer",
    "WordTokenizer",
    "make_tokenizer",
]
WORDPIECE_RESERVED = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def _pad_and_cut(ragged: tf.RaggedTensor, max_length: int, unknown_id: int) -> tf.Tensor:
    """(B, None) ragged ids -> (B, T) dense ids, cut to `max_length`, padded with 0, no empty row."""
    ragged = ragged[:, :max_length]
    lengths = ragged.row_lengths()  # (B,)
    ids = ragged.to_tensor(default_value=0)  # (B, T0), T0 may be 0
    ids = tf.pad(ids, [[0, 0], [0, 1]])[:, : tf.maximum(tf.shape(ids)[1], 1)]  # (B, T), T >= 1
    first = tf.where(lengths > 0, ids[:, 0], tf.cast(unknown_id, ids.dtype))  # (B,)
    return tf.concat([first[:, None], ids[:, 1:]], axis=1)  # (B, T)


@tf.keras.saving.register_keras_serializable(package="scratch")
class WordTokenizer(tf.keras.layers.Layer):
    """Lowercased, punctuation-free words looked up in a fixed vocabulary (id 0 padding, id 1 unknown).

    Args:
        vocabulary: the tokens in id order, starting with "" and "[UNK]" (as `adapt` produces it).
        max_length: texts are cut to this many tokens.
    """

    def __init__(self, vocabulary: list[str], max_length: int, **kwargs):
        super().__init__(**kwargs)
        vocabulary = [str(token) for token in vocabulary]
        if tuple(vocabulary[: len(WORD_RESERVED)]) != WORD_RESERVED:
            raise ValueError(f"A word vocabulary must start with the reserved tokens {list(WORD_RESERVED)}.")
        self.vocabulary = vocabulary
        self.max_length = max_length
        self.vectorize = tf.keras.layers.TextVectorization(vocabulary=vocabulary, ragged=True, name="vectorize")

    @classmethod
    def adapt(cls, texts: list[str], vocab_size: int, max_length: int, **kwargs) -> WordTokenizer:
        """A tokenizer whose vocabulary is the `vocab_size - 2` most frequent words of `texts`, plus the reserved two."""
        if vocab_size <= len(WORD_RESERVED):
            raise ValueError(
                f"vocab_size {vocab_size} leaves no room for words after the {len(WORD_RESERVED)} reserved tokens "
                f"{list(WORD_RESERVED)}; use at least {len(WORD_RESERVED) + 1}."
            )
        if not texts:
            raise ValueError("Cannot build a word vocabulary from an empty train split.")
        vectorize = tf.keras.layers.TextVectorization(max_tokens=vocab_size)
        vectorize.adapt(tf.data.Dataset.from_tensor_slices(tf.constant(texts, tf.string)).batch(1024))
        return cls(vectorize.get_vocabulary(), max_length, **kwargs)

    def call(self, texts: tf.Tensor) -> tf.Tensor:
        return _pad_and_cut(self.vectorize(texts), self.max_length, unknown_id=1)  # (B, T)

    @property
    def unknown_id(self) -> int:
        return 1

    def get_config(self):
        return {**super().get_config(), "vocabulary": self.vocabulary, "max_length": self.max_length}


@tf.keras.saving.register_keras_serializable(package="scratch")
class WordPieceTokenizer(tf.keras.layers.Layer):
    """BERT's uncased tokenizer: lowercase, strip accents, split words and punctuation, then WordPiece (`##`).

    Args:
        vocabulary: the WordPiece vocabulary in id order; "[PAD]" must be id 0.
        max_length: texts are cut to this many tokens.
    """

    def __init__(self, vocabulary: list[str], max_length: int, **kwargs):
        super().__init__(**kwargs)
        import tensorflow_text as tf_text  # only this tokenizer needs it

        vocabulary = [str(token) for token in vocabulary]
        missing = [token for token in WORDPIECE_RESERVED[:2] if token not in vocabulary]
        if missing or vocabulary[0] != "[PAD]":
            raise ValueError(f"A WordPiece vocabulary needs [PAD] at id 0 and an [UNK] token; missing {missing}.")
        self.vocabulary = vocabulary
        self.max_length = max_length
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

    def call(self, texts: tf.Tensor) -> tf.Tensor:
        pieces = self.bert.tokenize(texts).merge_dims(1, 2)  # (B, words, pieces) -> (B, None)
        return _pad_and_cut(pieces, self.max_length, self.unknown_id)  # (B, T)

    def get_config(self):
        return {**super().get_config(), "vocabulary": self.vocabulary, "max_length": self.max_length}


def make_tokenizer(kind: str, train_texts: list[str], vocab_size: int, max_length: int) -> tf.keras.layers.Layer:
    """The tokenizer named by `--tokenizer`: words adapted on `train_texts`, or the packaged WordPiece vocabulary."""
    if kind == "words":
        return WordTokenizer.adapt(train_texts, vocab_size, max_length, name="tokenizer")
    if kind == "wordpiece":
        from core.pretrained import packaged_minilm

        return WordPieceTokenizer.from_file(packaged_minilm() / "vocab.txt", max_length, name="tokenizer")
    raise ValueError(f"tokenizer must be one of {', '.join(TOKENIZERS)}, got {kind!r}.")
