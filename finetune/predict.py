"""The fine-tuned side's `Classifier`: loads a run directory and predicts probabilities or values, of texts or of text
pairs (`core.classifier`).

Texts (pairs) are tokenised in one batched call, grouped by length and each group padded to its own longest.
The forward pass is the run's `model.onnx` in ONNX Runtime when run.json's `serving` says it reproduces the
TensorFlow model (`core.onnx`), else one `tf.function` with an unknown batch and sequence length, traced
once, so a single text costs a few milliseconds instead of the tens `model.predict` spends setting up each call.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import tensorflow as tf

from core.attribution import PathGradients, explained, word_of_offset, words_of
from core.classifier import BaseClassifier, predict_in_batches
from core.kinds import Kind
from core.long_text import Span
from core.onnx import onnx_forward
from core.record import RunRecord
from core.rundir import RunError
from finetune.pipeline import SPECIALS, encode, pad, pad_types

PREDICT_BATCH = 64


class FinetunedClassifier(BaseClassifier):
    """A fine-tuned sequence-classification (or regression) model with its tokenizer; the `core.classifier` base
    supplies the `Classifier` protocol over `outputs`.

    Attributes:
        runtime: what computes the outputs: `tensorflow` or `onnxruntime`.
    """

    side = "finetune"
    attributes = True

    def __init__(
        self,
        model: tf.keras.Model | Callable[[], tf.keras.Model],
        tokenizer,
        max_length: int,
        record: RunRecord | None = None,
        forward: Callable[..., np.ndarray] | None = None,
        *,
        kind: Kind | None = None,
        labels: Sequence[str] | None = None,
        has_pairs: bool | None = None,
        thresholds: Sequence[float] | None = None,
        temperatures: Sequence[float] | None = None,
        batch_size: int = PREDICT_BATCH,
    ) -> None:
        """`model` may be a function that loads it, called when `.model` is first read; `forward`, (ids, mask[, types])
        -> outputs, replaces the TensorFlow forward pass (the ONNX Runtime path); the keywords are read from `record`
        when not given (`core.classifier.BaseClassifier`)."""
        super().__init__(
            record, kind=kind, labels=labels, has_pairs=has_pairs, thresholds=thresholds, temperatures=temperatures
        )
        self._model = model
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.batch_size = batch_size
        self.runtime = "onnxruntime" if forward is not None else "tensorflow"
        if forward is None:
            spec = tf.TensorSpec((None, None), tf.int32)
            graph = tf.function(self._forward, input_signature=[spec] * (3 if self.has_pairs else 2))
            forward = lambda *inputs: graph(*inputs).numpy()  # noqa: E731
        self._outputs = forward

    @property
    def model(self) -> tf.keras.Model:
        """The transformers TF model (loaded on first use when the run is served through ONNX Runtime)."""
        if not isinstance(self._model, tf.keras.Model):
            self._model = self._model()
        return self._model

    def _forward(self, input_ids: tf.Tensor, attention_mask: tf.Tensor, token_type_ids: tf.Tensor | None = None):
        types = {} if token_type_ids is None else {"token_type_ids": token_type_ids}  # single texts: segment 0
        logits = self.model(input_ids=input_ids, attention_mask=attention_mask, **types, training=False).logits
        return self.kind.activate(logits)  # (B, C), (B, L) or (B,)

    def outputs(self, texts: list[str], text_pairs: list[str] | None = None) -> np.ndarray:
        """What the model gives for each text (pair), in the order given: probabilities (n, C) or (n, L), or values
        (n,), float32."""
        texts = list(texts)
        if not texts:
            return self.kind.empty_outputs(len(self.labels))
        pairs = None if text_pairs is None else list(text_pairs)
        encoded = encode(self.tokenizer, texts, self.max_length, pairs, self.reading)
        rows = list(range(len(texts)))

        def padded(chosen: list[int]) -> np.ndarray:
            ids, mask = pad([encoded.ids[i] for i in chosen], self.tokenizer.pad_token_id)
            if encoded.types is None:
                return self._outputs(ids, mask)
            return self._outputs(ids, mask, pad_types([encoded.types[i] for i in chosen], ids.shape[1]))

        return predict_in_batches(padded, rows, self.batch_size, lengths=encoded.lengths)

    @property
    def window(self) -> int:
        """The pieces of text a window holds: `max_length` less [CLS] and [SEP]."""
        return self.max_length - SPECIALS

    def piece_counts(self, texts: list[str]) -> np.ndarray:
        """Each text's word pieces, [CLS] and [SEP] left out, int64 (n,)."""
        return encode(self.tokenizer, list(texts), self.max_length, reading=self.reading).pieces

    def window_logits(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Each window `[CLS] pieces [SEP]` of each text (`finetune.pipeline.encode` with `windows`): its logits
        (W, K) from the TensorFlow model, and its text (W,)."""
        encoded = encode(self.tokenizer, list(texts), self.max_length, reading=self.reading, windows=True)
        documents = np.arange(len(texts)) if encoded.documents is None else encoded.documents

        def logits(chosen: list[int]) -> np.ndarray:
            ids, mask = pad([encoded.ids[i] for i in chosen], self.tokenizer.pad_token_id)
            return self._logits(tf.constant(ids), tf.constant(mask)).numpy()

        rows = list(range(len(encoded.ids)))
        return predict_in_batches(logits, rows, self.batch_size, lengths=encoded.lengths), documents

    @functools.cached_property
    def _logits(self) -> Callable[[tf.Tensor, tf.Tensor], tf.Tensor]:
        spec = tf.TensorSpec((None, None), tf.int32)
        return tf.function(
            lambda ids, mask: self.model(input_ids=ids, attention_mask=mask, training=False).logits,
            input_signature=[spec, spec],
        )

    def embedding_gradients(
        self, text: str, text_pair: str | None, points: np.ndarray, targets: list[int | None], span: Span = None
    ) -> PathGradients:
        """Along the path from the baseline to the input's token vectors, fed as transformers' `inputs_embeds`: the
        outputs (S, ...) and each target's gradients (targets, S, P, C) at the P word pieces (`core.attribution`)."""
        if text_pair is None:  # the whole text, then the pieces the reading keeps (or one window of them)
            encoded = self.tokenizer(text, truncation=False, return_offsets_mapping=True, verbose=False)
            kept = self.reading.kept(len(encoded["input_ids"]) - SPECIALS, self.window, self.max_length, span)
            positions = [0, *(1 + k for k in kept), len(encoded["input_ids"]) - 1]  # [CLS] pieces [SEP]
        else:
            encoded = self.tokenizer(
                text, text_pair, truncation="longest_first", max_length=self.max_length, return_offsets_mapping=True
            )
            positions = list(range(len(encoded["input_ids"])))
        ids = np.asarray(encoded["input_ids"], np.int32)[positions]  # (T,)
        sequences = [encoded.sequence_ids()[p] for p in positions]  # 0 or 1 for a text's pieces, None for specials
        offsets = [encoded["offset_mapping"][p] for p in positions]
        moving = np.array([sequence is not None for sequence in sequences])  # (T,)
        spans = [words_of(text), words_of(text_pair or "")]
        word_ids = np.array(
            [
                word_of_offset(spans[sequence], start) + (len(spans[0]) if sequence == 1 else 0)
                for (start, _), sequence in zip(offsets, sequences, strict=True)
                if sequence is not None
            ],
            np.int64,
        )  # (P,)
        vectors = tf.gather(self.model.get_input_embeddings().weight, ids)  # (T, C)
        scale = tf.where(moving[None, :, None], tf.constant(points, tf.float32)[:, None, None], 1.0)  # (S, T, 1)
        rows = len(points)
        inputs = {"attention_mask": tf.ones((rows, len(ids)), tf.int32)}
        if self.has_pairs:
            inputs["token_type_ids"] = tf.tile(tf.constant(encoded["token_type_ids"], tf.int32)[None], [rows, 1])
        with tf.GradientTape(persistent=True) as tape:
            path = scale * vectors[None]  # (S, T, C): the word pieces' vectors scaled by a, the rest as they are
            tape.watch(path)
            logits = self.model(None, inputs_embeds=path, **inputs, training=False).logits  # (S, K)
            outputs = explained(self.kind).outputs(logits)  # (S, K) or (S,)
            chosen = [outputs if index is None else outputs[:, index] for index in targets]  # each (S,)
        gradients = np.stack([tape.gradient(out, path).numpy()[:, moving] for out in chosen])  # (targets, S, P, C)
        del tape
        return PathGradients(outputs.numpy(), gradients, vectors.numpy()[moving], word_ids)


def load(run_dir: Path, record: RunRecord, runtime: str | None = None) -> FinetunedClassifier:
    """Loads the model and tokenizer saved in `run_dir` (called by `core.classifier.load`).

    Args:
        record: the run's record.
        runtime: `tensorflow` or `onnxruntime`; by default ONNX Runtime when run.json's `serving.runtime` names it
            and `onnxruntime` imports, else TensorFlow.
    """
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(run_dir)
    forward = onnx_forward(run_dir, record, runtime, onnx_runtime_forward)
    model = load_model(run_dir) if forward is None else lambda: load_model(run_dir)  # ONNX: loaded when first asked
    return FinetunedClassifier(model, tokenizer, record.data.options["max_length"], record, forward)


def onnx_runtime_forward(path: Path) -> Callable[..., np.ndarray]:
    """The run's ONNX model through ONNX Runtime (`finetune.onnx`)."""
    from finetune.onnx import OnnxForward

    return OnnxForward(path)


def load_model(run_dir: Path) -> tf.keras.Model:
    """The run's transformers TF model."""
    from transformers import TFAutoModelForSequenceClassification

    import finetune.modeling  # noqa: F401 - registers the mean-pooled model type a run may have
    from finetune.checkpoint import TF_WEIGHTS

    if not (Path(run_dir) / TF_WEIGHTS).is_file():
        raise RunError(f"{run_dir} has no {TF_WEIGHTS}; the run is incomplete, train it again with python -m finetune.")
    from transformers.utils import logging as transformers_logging

    from core.console import notices_shown

    # transformers' advice on loading a checkpoint ("Some layers ... were not used", "This IS expected ...") is
    # about its own examples, not a finished run; shown with --verbose only
    verbosity = transformers_logging.get_verbosity()
    if not notices_shown():
        transformers_logging.set_verbosity_error()
    try:
        return TFAutoModelForSequenceClassification.from_pretrained(run_dir)
    finally:
        transformers_logging.set_verbosity(verbosity)
