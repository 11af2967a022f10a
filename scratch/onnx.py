"""The from-scratch classifier in ONNX (`core.onnx`): token ids in, probabilities out, tokenised in Python.

A single text's TensorFlow call spends as long in the tokenizer's string ops as in the network, so the ONNX path
tokenises outside the graph: `PythonWords` repeats the `words` tokenizer (Keras' `TextVectorization` with its
defaults) with plain string operations, and the `wordpiece` tokenizer stays the TensorFlow layer. The run keeps its
`model.onnx` only when tokenizer and network together reproduce the TensorFlow model on the validation split.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import tensorflow as tf

from core.onnx import Session, convert, keep_if_faithful
from scratch.tokenizer import WordTokenizer

# What `TextVectorization(standardize="lower_and_strip_punctuation", split="whitespace")` does: tf.strings.lower
# lowers ASCII letters only, its punctuation class is Keras' DEFAULT_STRIP_REGEX, and tf.strings.split splits on
# runs of ASCII whitespace.
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_PUNCTUATION = re.compile(r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']')
_WHITESPACE = re.compile(r"[ \t\n\v\f\r]+")


class PythonWords:
    """`WordTokenizer` in Python: (B,) strings -> (B, T) int64 ids, the same ids as the layer."""

    def __init__(self, tokenizer: WordTokenizer):
        self.ids = {token: i for i, token in enumerate(tokenizer.vocabulary) if token}
        self.unknown_id = tokenizer.unknown_id
        self.max_length = tokenizer.max_length

    def words(self, text: str) -> list[str]:
        text = _PUNCTUATION.sub("", text.translate(_ASCII_LOWER))
        return [word for word in _WHITESPACE.split(text) if word]

    def __call__(self, texts: list[str]) -> np.ndarray:
        rows = [
            [self.ids.get(w, self.unknown_id) for w in self.words(t)][: self.max_length] or [self.unknown_id]
            for t in texts
        ]
        ids = np.zeros((len(rows), max(len(r) for r in rows)), np.int64)  # (B, T), 0 is padding
        for i, row in enumerate(rows):
            ids[i, : len(row)] = row
        return ids


def token_ids(tokenizer: tf.keras.layers.Layer) -> Callable[[list[str]], np.ndarray]:
    """The run's tokenizer as texts -> (B, T) int64 ids: in Python for `words`, the TensorFlow layer otherwise."""
    if isinstance(tokenizer, WordTokenizer):
        return PythonWords(tokenizer)
    graph = tf.function(tokenizer, input_signature=[tf.TensorSpec([None], tf.string)])
    return lambda texts: graph(tf.constant(list(texts), tf.string)).numpy().astype(np.int64)


def convert_classifier(classifier: tf.keras.Model, path: Path) -> float:
    """Writes the classifier (ids -> logits) with its softmax as ONNX: input `token_ids` int64 (batch, length),
    output `probabilities` float32 (batch, K). Returns the seconds it took."""
    spec = [tf.TensorSpec((None, None), tf.int64, name="token_ids")]

    @tf.function(input_signature=spec)
    def probabilities(ids):
        return tf.identity(tf.nn.softmax(classifier(ids, training=False), axis=-1), name="probabilities")

    return convert(probabilities, spec, path)


class OnnxForward:
    """Texts (B,) -> probabilities (B, K): the run's tokenizer, then `model.onnx` in ONNX Runtime."""

    def __init__(self, path: str | Path, tokenizer: tf.keras.layers.Layer):
        self.session = Session(path)
        self.token_ids = token_ids(tokenizer)

    def __call__(self, texts: list[str]) -> np.ndarray:
        return self.session(token_ids=self.token_ids(texts))


def write_checked(model: tf.keras.Model, labels: list[str], texts: list[str], run_dir: Path) -> dict[str, Any]:
    """The run's `model.onnx`, kept when tokenizer and network reproduce the end-to-end Keras `model` on `texts`."""
    from scratch.predict import ScratchClassifier

    classifier, tokenizer = model.get_layer("classifier"), model.get_layer("tokenizer")
    run = {"data": {"labels": labels}}
    reference = ScratchClassifier(model, run).predict_proba(texts)

    def predict(path: Path) -> np.ndarray:
        return ScratchClassifier(model, run, forward=OnnxForward(path, tokenizer)).predict_proba(texts)

    return keep_if_faithful(run_dir, lambda path: convert_classifier(classifier, path), reference, predict)
