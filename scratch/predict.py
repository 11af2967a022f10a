"""Loads a finished scratch run as a `core.classifier.Classifier`, with attention maps for the app.

Outputs come from the run's `model.onnx` in ONNX Runtime when run.json's `serving` says it reproduces the
TensorFlow model (`scratch.onnx`), else from the end-to-end Keras model in one `tf.function`: class probabilities
(single label), each label's independent probability (multi-label, decided by the run's `thresholds` through
`Kind.decide`), or values (regression); for a pair task, of `(text, text_pair)` pairs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import tensorflow as tf

from core.attribution import PathGradients, explained, words_of
from core.classifier import BaseClassifier, predict_in_batches
from core.kinds import Kind
from core.long_text import Reading, Span
from core.onnx import onnx_forward
from core.record import RunRecord
from core.rundir import RunError
from core.runtime import STRINGS
from scratch.embedding import PAD_ID
from scratch.encoder import TransformerEncoderBlock

# Imported for what they register: every layer class a saved end-to-end model names.
from scratch.model import attention_maps, build_end_to_end  # noqa: F401
from scratch.pipeline import predict_logits, windows
from scratch.schedule import WarmupInverseSqrt  # noqa: F401
from scratch.tokenizer import WordPieceTokenizer, WordTokenizer  # noqa: F401

DEFAULT_MODEL_FILE = "model.keras"
PREDICT_BATCH = 64

Forward = Callable[[list[str], list[str] | None], np.ndarray]  # texts (and second texts) -> outputs (B, K) or (B,)


def keras_forward(model: tf.keras.Model, pairs: bool) -> Forward:
    """The end-to-end Keras model as one `tf.function` over string batches."""
    if pairs:
        graph = tf.function(lambda a, b: model([a, b], training=False), input_signature=[STRINGS, STRINGS])
        return lambda texts, text_pairs: graph(
            tf.constant(texts, tf.string), tf.constant(text_pairs, tf.string)
        ).numpy()
    graph = tf.function(lambda texts: model(texts, training=False), input_signature=[STRINGS])
    return lambda texts, text_pairs: graph(tf.constant(texts, tf.string)).numpy()


def in_length_order(
    forward: Forward, texts: list[str], text_pairs: list[str] | None, batch_size: int, width: int
) -> np.ndarray:
    """`forward` over the inputs in batches of similar length (`core.classifier.predict_in_batches`), rows (n, width)
    in the order given; a pair's length is its two texts' together."""
    if text_pairs is None:
        return predict_in_batches(
            lambda chunk: forward(chunk, None).reshape(len(chunk), width), texts, batch_size, width
        )
    lengths = [len(text) + len(pair) for text, pair in zip(texts, text_pairs)]

    def predict(rows: list[int]) -> np.ndarray:
        return forward([texts[i] for i in rows], [text_pairs[i] for i in rows]).reshape(len(rows), width)

    return predict_in_batches(predict, list(range(len(texts))), batch_size, width, lengths=lengths)


class ScratchClassifier(BaseClassifier):
    """A trained from-scratch Transformer: raw strings (or pairs of them) in, probabilities or values out; the
    `core.classifier` base supplies the `Classifier` protocol over `outputs`.

    Args:
        model: the end-to-end Keras model (strings (B,), two inputs for a pair task -> outputs).
        record: the run's record.
        forward: texts (and second texts) -> outputs in place of the Keras model (the ONNX Runtime path).
        kind, labels, has_pairs, thresholds, temperatures: instead of the record's, for a run still being trained
            (`core.classifier.BaseClassifier`).
        batch_size: inputs per forward pass.
    """

    side = "scratch"
    attends = True
    attributes = True

    def __init__(
        self,
        model: tf.keras.Model,
        record: RunRecord | None = None,
        forward: Forward | None = None,
        *,
        kind: Kind | None = None,
        labels: Sequence[str] | None = None,
        has_pairs: bool | None = None,
        thresholds: Sequence[float] | None = None,
        temperatures: Sequence[float] | None = None,
        batch_size: int = PREDICT_BATCH,
    ):
        super().__init__(
            record, kind=kind, labels=labels, has_pairs=has_pairs, thresholds=thresholds, temperatures=temperatures
        )
        self.model = model
        self.batch_size = batch_size
        self.tokenizer = model.get_layer("tokenizer")
        classifier = model.get_layer("classifier")
        self.embedding = classifier.get_layer("embedding")
        self.blocks = [layer for layer in classifier.layers if isinstance(layer, TransformerEncoderBlock)]
        self.runtime = "onnxruntime" if forward is not None else "tensorflow"
        self._forward = forward or keras_forward(model, self.has_pairs)
        strings = [tf.TensorSpec([1], tf.string)] * (2 if self.has_pairs else 1)
        self._attention = tf.function(self._attention_maps, input_signature=strings)

    def outputs(self, texts: list[str], text_pairs: list[str] | None = None) -> np.ndarray:
        """The model's outputs as they come, in the order given: probabilities (n, K), or values (n,).

        Inputs are sorted by length so that each batch is padded to little more than its own inputs.
        """
        texts = [str(text) for text in texts]
        text_pairs = None if text_pairs is None else [str(text) for text in text_pairs]
        width = self.kind.num_outputs(len(self.labels))
        rows = in_length_order(self._forward, texts, text_pairs, self.batch_size, width)  # (n, K)
        return rows[:, 0] if self.kind.gives_values else rows

    @property
    def window(self) -> int:
        """The pieces a window holds: the tokenizer's max_length (the from-scratch model adds no special token)."""
        return self.tokenizer.max_length

    def piece_counts(self, texts: list[str]) -> np.ndarray:
        """Each text's tokens, uncut, int64 (n,)."""
        ids = self.tokenizer.ragged_ids(tf.constant([str(text) for text in texts], tf.string))  # (n, None)
        return ids.row_lengths().numpy().astype(np.int64)

    def window_logits(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Each window of each text (`scratch.pipeline.windows`): the classifier's logits (W, K) and its text (W,)."""
        rows, documents = windows(self.tokenizer, [str(text) for text in texts], self.reading)
        return predict_logits(self.model.get_layer("classifier"), rows, self.batch_size), documents

    def _attention_maps(self, *strings: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        token_ids = self.tokenizer(*strings)  # (1, T)
        return token_ids[0], attention_maps(self.embedding, self.blocks, token_ids)  # (T,), (L, H, T, T)

    def explain(self, text: str, text_pair: str | None = None) -> tuple[list[str], np.ndarray]:
        """The text's (or pair's) tokens as the model saw them and its attention weights, (layers, heads, T, T).

        Row i of a map is how token i spread its attention over the tokens (each row sums to 1).
        """
        if (text_pair is not None) != self.has_pairs:
            raise ValueError("explain takes a text_pair exactly when the model reads text pairs.")
        strings = [text] if text_pair is None else [text, text_pair]
        token_ids, maps = self._attention(*(tf.constant([str(s)], tf.string) for s in strings))
        vocabulary = self.tokenizer.vocabulary
        tokens = [vocabulary[i] if vocabulary[i] else "[PAD]" for i in token_ids.numpy().tolist()]
        return tokens, maps.numpy()

    @functools.cached_property
    def after_embedding(self) -> tf.keras.Model:
        """The classifier from its embedding layer's output (the embedded sequence, or each text's of a pair read as
        two) to its logits (B, K): what attribution runs on points along its path, called with the embedding's
        padding mask(s)."""
        classifier = self.model.get_layer("classifier")
        return tf.keras.Model(self.embedding.output, classifier.output, name="after_embedding")

    def embedding_gradients(
        self, text: str, text_pair: str | None, points: np.ndarray, targets: list[int | None], span: Span = None
    ) -> PathGradients:
        """Along the path from the baseline to the input's token vectors (the output of the embedding's token lookup,
        `TokenAndPositionEmbedding.token_embedding`): the outputs (S, ...) and each target's gradients
        (targets, S, P, C) at the P word pieces (`core.attribution`).

        The input's ids are looked up once; S copies of their vectors, scaled by a at the word pieces (not at padding
        or the separator), go through the rest of the embedding (`from_vectors`) and the classifier after it
        (`after_embedding`), so whatever reading the model makes of its inputs starts from points on the path.
        """
        texts = [text] if text_pair is None else [text, text_pair]
        kept = None  # the positions of the text's pieces the model reads: all of a pair's as the layer cuts them
        if text_pair is None:  # the pieces the layer keeps (its own cut), or one window of them
            pieces = self.tokenizer.ragged_ids(tf.constant([text], tf.string))[0].numpy()  # (N,)
            size = self.tokenizer.max_length
            kept = Reading(self.tokenizer.long_text).kept(len(pieces), size, size, span)
            row = pieces[kept] if kept else np.array([self.tokenizer.unknown_id], np.int64)  # an empty text: [UNK]
            ids = tf.constant(np.tile(row[None], [len(points), 1]))  # (S, T)
        else:
            ids = self.tokenizer(*(tf.constant([s] * len(points), tf.string) for s in texts))  # (S, T)
        special = [PAD_ID] + ([] if self.tokenizer.separator_id is None else [self.tokenizer.separator_id])
        moving = tf.logical_not(tf.reduce_any(ids[..., None] == tf.constant(special, ids.dtype), axis=-1))  # (S, T)
        vectors = self.embedding.token_embedding(ids)  # (S, T, C)
        a = tf.constant(points, vectors.dtype)[:, None, None]  # (S, 1, 1): row s is point s
        with tf.GradientTape(persistent=True) as tape:
            path = tf.where(moving[..., None], a * vectors, vectors)  # (S, T, C)
            tape.watch(path)
            embedded = self.embedding.from_vectors(path, ids, training=False)
            logits = self.after_embedding(embedded, mask=self.embedding.compute_mask(ids), training=False)  # (S, K)
            outputs = explained(self.kind).outputs(logits)  # (S, K) or (S,)
            chosen = [outputs if index is None else outputs[:, index] for index in targets]  # each (S,)
        grads = np.stack([tape.gradient(out, path).numpy() for out in chosen])  # (targets, S, T, C)
        del tape
        ids, vectors = ids.numpy()[0], vectors.numpy()[0]  # every row holds the same input
        segments = self._segments(ids)
        return PathGradients(
            outputs.numpy(),
            np.concatenate([grads[:, :, positions] for positions in segments], axis=2),
            np.concatenate([vectors[positions] for positions in segments]),
            np.concatenate([self._word_ids(texts, i, ids[positions], kept) for i, positions in enumerate(segments)]),
        )

    def _segments(self, ids: np.ndarray) -> list[np.ndarray]:
        """The positions of each text's pieces in one row of ids: the row's real ids, split at the separator."""
        separator = self.tokenizer.separator_id
        segments, current = [], []
        for position, token in enumerate(ids.tolist()):
            if token == separator:
                segments.append(current)
                current = []
            elif token != PAD_ID:
                current.append(position)
        return [np.array(positions, np.int64) for positions in [*segments, current] if positions]

    def _word_ids(self, texts: list[str], segment: int, ids: np.ndarray, kept: list[int] | None = None) -> np.ndarray:
        """Each piece's word (an index into all the texts' words) for the `segment`th run of pieces the model embedded:
        the pieces of text `segment % len(texts)` at the positions `kept` (default its first ones, as a pair is cut);
        -1 past the text's own pieces."""
        which = segment % len(texts)
        spans = words_of(texts[which])
        words = [texts[which][a:b] for a, b in spans]
        pieces = self.tokenizer.ragged_ids(tf.constant(words, tf.string)).to_list() if words else []
        expected = [piece for row in pieces for piece in row]
        owner = [i for i, row in enumerate(pieces) for _ in row]
        kept = list(range(len(ids))) if not kept else kept
        read = [expected[k] for k in kept if k < len(expected)]
        if read != ids.tolist()[: len(read)]:
            raise RuntimeError(
                f"the model embedded pieces {ids.tolist()} where text {which} gives {read}; its reading of the "
                "texts is not one this attribution can match to words."
            )
        offset = sum(len(words_of(t)) for t in texts[:which])
        return np.array([offset + owner[k] if k < len(owner) else -1 for k in kept[: len(ids)]], np.int64)


def load(run_dir: Path, record: RunRecord, runtime: str | None = None) -> ScratchClassifier:
    """Loads `run_dir/model.keras` with Keras safe mode on (called by `core.classifier.load`).

    Args:
        record: the run's record.
        runtime: `tensorflow` or `onnxruntime`; by default ONNX Runtime when run.json's `serving.runtime` names it
            and `onnxruntime` imports, else TensorFlow.
    """
    path = Path(run_dir) / (record.model.file or DEFAULT_MODEL_FILE)
    if not path.is_file():
        raise RunError(f"{run_dir} has no {path.name}; the run is incomplete, train it again with python -m scratch.")
    model = tf.keras.models.load_model(path, compile=False, safe_mode=True)

    def onnx_runtime_forward(onnx_file: Path) -> Forward:
        from scratch.onnx import OnnxForward

        return OnnxForward(onnx_file, model.get_layer("tokenizer"))

    return ScratchClassifier(model, record, onnx_forward(run_dir, record, runtime, onnx_runtime_forward))
