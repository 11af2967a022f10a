"""The from-scratch classifier in ONNX (`core.onnx`): token ids in, probabilities (or values) out, tokenised in
Python.

A single text's TensorFlow call spends as long in the tokenizer's string ops as in the network, so the ONNX path
tokenises outside the graph: `PythonWords` repeats the `words` tokenizer (Keras' `TextVectorization` with its
defaults) with plain string operations, and `PythonWordPiece` the `wordpiece` one (tensorflow-text's BERT tokenizer)
with the `tokenizers` library; both join the texts of a pair as the layers do (`scratch.tokenizer.pair_lengths`). The
run keeps its `model.onnx` only when tokenizer and network together reproduce the TensorFlow model on the
validation split.
"""

from __future__ import annotations

import re
import unicodedata
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

import numpy as np
import regex
import tensorflow as tf

from core.data import TaskData
from core.kinds import Kind
from core.long_text import Reading
from core.onnx import Session, convert, keep_if_faithful
from scratch.tokenizer import WordPieceTokenizer, WordTokenizer, pair_lengths

# What `TextVectorization(standardize="lower_and_strip_punctuation", split="whitespace")` does: tf.strings.lower
# lowers ASCII letters only, its punctuation class is Keras' DEFAULT_STRIP_REGEX, and tf.strings.split splits on
# runs of ASCII whitespace.
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_PUNCTUATION = re.compile(r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']')
_WHITESPACE = re.compile(r"[ \t\n\v\f\r]+")
# tensorflow-text's `BasicTokenizer(lower_case=True)`, step by step: ICU's NFKC_Casefold (NFKC, full case folding, and
# the Unicode Default_Ignorable_Code_Point characters removed), NFD without the combining marks, control and format
# characters as spaces; then words split at [\t\n\f\r ] (RE2's \s) with ASCII punctuation, Unicode punctuation and
# each CJK ideograph a word of its own; a word of more than 100 UTF-8 bytes is one unknown piece.
_IGNORABLE = regex.compile(r"\p{Default_Ignorable_Code_Point}")
_WORD_BREAKS = regex.compile(
    r"[\t\n\f\r ]+|([!-/:-@\[-`{-~\p{P}\u4E00-\u9FFF\u3400-\u4DBF\U00020000-\U0002A6DF\U0002A700-\U0002B73F"
    r"\U0002B740-\U0002B81F\U0002B820-\U0002CEAF\uF900-\uFAFF\U0002F800-\U0002FA1F])"
)
_MAX_WORD_BYTES = 100


class PythonTokenizer(ABC):
    """What both Python tokenizers share: a tokenizer layer's ids from `row(text)`, each text's ids uncut, joined and
    cut as the layer does: (B,) strings (and for a pair task (B,) second texts) -> (B, T) int64 ids."""

    def __init__(self, tokenizer: WordTokenizer | WordPieceTokenizer):
        self.unknown_id = tokenizer.unknown_id
        self.separator_id = tokenizer.separator_id
        self.max_length = tokenizer.max_length
        self.reading = Reading(tokenizer.long_text)

    @abstractmethod
    def row(self, text: str) -> list[int]:
        """The text's ids, uncut."""

    def __call__(self, texts: list[str], text_pairs: list[str] | None = None) -> np.ndarray:
        if text_pairs is None:  # cut to max_length as the layer cuts, an empty text one unknown id
            cut = lambda row: self.reading.cut(row, self.max_length, self.max_length)  # noqa: E731
            rows = [list(cut(self.row(text))) or [self.unknown_id] for text in texts]
        else:
            rows = [self.pair_row(self.row(text), self.row(pair)) for text, pair in zip(texts, text_pairs)]
        ids = np.zeros((len(rows), max(len(r) for r in rows)), np.int64)  # (B, T), 0 is padding
        for i, row in enumerate(rows):
            ids[i, : len(row)] = row
        return ids

    def pair_row(self, first: list[int], second: list[int]) -> list[int]:
        """`first [SEP] second`, cut to max_length as `pair_lengths` says."""
        kept_first, kept_second = pair_lengths(len(first), len(second), self.max_length)
        return [*first[:kept_first], self.separator_id, *second[:kept_second]]


class PythonWords(PythonTokenizer):
    """`WordTokenizer` in Python: the same ids as the layer."""

    def __init__(self, tokenizer: WordTokenizer):
        super().__init__(tokenizer)
        self.ids = {token: i for i, token in enumerate(tokenizer.vocabulary) if token}

    def words(self, text: str) -> list[str]:
        text = _PUNCTUATION.sub("", text.translate(_ASCII_LOWER))
        return [word for word in _WHITESPACE.split(text) if word]

    def row(self, text: str) -> list[int]:
        return [self.ids.get(word, self.unknown_id) for word in self.words(text)]


class PythonWordPiece(PythonTokenizer):
    """`WordPieceTokenizer` in Python: tensorflow-text's normalisation and word split, then the WordPiece model of
    the `tokenizers` library on the layer's vocabulary; the same ids as the layer."""

    def __init__(self, tokenizer: WordPieceTokenizer):
        from tokenizers.models import WordPiece

        super().__init__(tokenizer)
        self.wordpiece = WordPiece({token: i for i, token in enumerate(tokenizer.vocabulary)}, unk_token="[UNK]")

    @staticmethod
    def words(text: str) -> list[str]:
        text = unicodedata.normalize("NFKC", _IGNORABLE.sub("", unicodedata.normalize("NFKC", text)).casefold())
        text = "".join(
            " " if category in ("Cc", "Cf") else char
            for char in unicodedata.normalize("NFD", text)
            if (category := unicodedata.category(char)) != "Mn"
        )
        return [word for word in _WORD_BREAKS.split(text) if word]

    def pieces(self, word: str) -> list[int]:
        if len(word.encode("utf-8")) > _MAX_WORD_BYTES:
            return [self.unknown_id]
        return [token.id for token in self.wordpiece.tokenize(word)]

    def row(self, text: str) -> list[int]:
        return [i for word in self.words(text) for i in self.pieces(word)]


def token_ids(tokenizer: tf.keras.layers.Layer) -> PythonTokenizer:
    """The run's tokenizer in Python, as texts (and second texts) -> (B, T) int64 ids."""
    if isinstance(tokenizer, WordTokenizer):
        return PythonWords(tokenizer)
    if isinstance(tokenizer, WordPieceTokenizer):
        return PythonWordPiece(tokenizer)
    raise TypeError(f"No Python equivalent of the tokenizer {type(tokenizer).__name__}.")


def convert_classifier(classifier: tf.keras.Model, path: Path, kind: Kind) -> float:
    """Writes the classifier (ids -> logits) with its kind's outputs (`Kind.activate`) as ONNX: input `token_ids`
    int64 (batch, length), output `probabilities` float32 (batch, K) or, for regression, `values` float32 (batch,).
    Returns the seconds it took."""
    spec = [tf.TensorSpec((None, None), tf.int64, name="token_ids")]

    @tf.function(input_signature=spec)
    def outputs(ids):
        return tf.identity(kind.activate(classifier(ids, training=False)), name=kind.outputs)

    return convert(outputs, spec, path)


class OnnxForward:
    """Texts (B,) (and a pair task's second texts) -> outputs (B, K) or (B,): the run's tokenizer, then `model.onnx`
    in ONNX Runtime."""

    def __init__(self, path: str | Path, tokenizer: tf.keras.layers.Layer):
        self.session = Session(path)
        self.token_ids = token_ids(tokenizer)

    def __call__(self, texts: list[str], text_pairs: list[str] | None = None) -> np.ndarray:
        return self.session(token_ids=self.token_ids(texts, text_pairs))


def write_checked(
    model: tf.keras.Model,
    data: TaskData,
    thresholds: list[float] | None,
    run_dir: Path,
    reference: np.ndarray | None = None,
) -> dict[str, Any]:
    """The run's `model.onnx`, kept when tokenizer and network reproduce the end-to-end Keras `model` on the
    validation split of `data` (its outputs `reference`, in the split's order, when training kept them)."""
    from scratch.predict import ScratchClassifier

    classifier, tokenizer = model.get_layer("classifier"), model.get_layer("tokenizer")
    task = {"kind": data.kind, "labels": data.labels, "has_pairs": data.has_pairs, "thresholds": thresholds}
    inputs = data.texts("validation"), data.text_pairs("validation")
    if reference is None:
        reference = ScratchClassifier(model, **task).outputs(*inputs)

    def predict(path: Path) -> np.ndarray:
        return ScratchClassifier(model, forward=OnnxForward(path, tokenizer), **task).outputs(*inputs)

    convert_to = lambda path: convert_classifier(classifier, path, data.kind)  # noqa: E731
    return keep_if_faithful(run_dir, convert_to, reference, predict)
