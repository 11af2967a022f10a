"""The fine-tuned side's `Classifier`: loads a run directory and predicts class probabilities.

Texts are tokenised in one batched call, grouped by length and each group padded to its own longest text.
The forward pass is the run's `model.onnx` in ONNX Runtime when run.json's `serving` says it reproduces the
TensorFlow model (`core.onnx`), else one `tf.function` with an unknown batch and sequence length, traced
once, so a single text costs a few milliseconds instead of the tens `model.predict` spends setting up each call.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import tensorflow as tf

from core.classifier import predict_in_batches
from core.onnx import onnx_path, serving_runtime
from core.rundir import RunError
from finetune.pipeline import encode, pad

PREDICT_BATCH = 64


class FinetunedClassifier:
    """A fine-tuned sequence-classification model with its tokenizer and label names.

    Attributes:
        name: how reports and the app call it.
        side: always `finetune`.
        labels: class names in label-id order.
        run: the parsed run.json (empty while the run is still being trained).
        runtime: what computes the probabilities: `tensorflow` or `onnxruntime`.
    """

    side = "finetune"

    def __init__(
        self,
        model: tf.keras.Model | Callable[[], tf.keras.Model],
        tokenizer,
        labels: list[str],
        max_length: int,
        run: dict[str, Any] | None = None,
        batch_size: int = PREDICT_BATCH,
        forward: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
    ) -> None:
        """`model` may be a function that loads it, called when `.model` is first read; `forward`, (ids, mask) ->
        probabilities, replaces the TensorFlow forward pass (the ONNX Runtime path)."""
        self.name = self.side
        self._model = model
        self.tokenizer = tokenizer
        self.labels = list(labels)
        self.max_length = max_length
        self.run = run or {}
        self.batch_size = batch_size
        self.runtime = "onnxruntime" if forward is not None else "tensorflow"
        if forward is None:
            spec = tf.TensorSpec((None, None), tf.int32)
            graph = tf.function(self._forward, input_signature=[spec, spec])
            forward = lambda input_ids, mask: graph(input_ids, mask).numpy()  # noqa: E731
        self._probabilities = forward

    @property
    def model(self) -> tf.keras.Model:
        """The transformers TF model (loaded on first use when the run is served through ONNX Runtime)."""
        if not isinstance(self._model, tf.keras.Model):
            self._model = self._model()
        return self._model

    def _forward(self, input_ids: tf.Tensor, attention_mask: tf.Tensor) -> tf.Tensor:
        logits = self.model(input_ids=input_ids, attention_mask=attention_mask, training=False).logits  # (B, C)
        return tf.nn.softmax(tf.cast(logits, tf.float32), axis=-1)

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        """Class probabilities, shape (len(texts), len(labels)), rows summing to 1, in the order given."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, len(self.labels)), dtype=np.float32)
        encoded = encode(self.tokenizer, texts, self.max_length)
        padded = lambda rows: self._probabilities(*pad(rows, self.tokenizer.pad_token_id))  # noqa: E731
        return predict_in_batches(padded, encoded.ids, self.batch_size)

    def predict(self, texts: list[str]) -> list[str]:
        """The most probable label name for each text."""
        return [self.labels[i] for i in self.predict_proba(texts).argmax(axis=1)]


def load(run_dir: Path, run: dict[str, Any], runtime: str | None = None) -> FinetunedClassifier:
    """Loads the model and tokenizer saved in `run_dir` (called by `core.classifier.load`).

    Args:
        runtime: `tensorflow` or `onnxruntime`; by default ONNX Runtime when run.json's `serving.runtime` names it
            and `onnxruntime` imports, else TensorFlow.
    """
    from transformers import AutoTokenizer

    runtime = runtime or serving_runtime(run)
    tokenizer = AutoTokenizer.from_pretrained(run_dir)
    labels, max_length = run["data"]["labels"], run["data"]["options"]["max_length"]
    if runtime == "onnxruntime":
        from finetune.onnx import OnnxForward

        forward = OnnxForward(onnx_path(run_dir, run))
        return FinetunedClassifier(lambda: load_model(run_dir), tokenizer, labels, max_length, run, forward=forward)
    return FinetunedClassifier(load_model(run_dir), tokenizer, labels, max_length, run)


def load_model(run_dir: Path) -> tf.keras.Model:
    """The run's transformers TF model."""
    from transformers import TFAutoModelForSequenceClassification

    import finetune.modeling  # noqa: F401 - registers the mean-pooled model type a run may have
    from finetune.checkpoint import TF_WEIGHTS

    if not (Path(run_dir) / TF_WEIGHTS).is_file():
        raise RunError(f"{run_dir} has no {TF_WEIGHTS}; the run is incomplete, train it again with python -m finetune.")
    return TFAutoModelForSequenceClassification.from_pretrained(run_dir)
