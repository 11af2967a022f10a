"""The fine-tuned classifier in ONNX (`core.onnx`): token ids and attention mask in, probabilities out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import tensorflow as tf

from core.onnx import Session, convert, keep_if_faithful


def convert_model(model: tf.keras.Model, path: Path) -> float:
    """Writes `model` (a transformers TF sequence classifier) as ONNX to `path`; returns the seconds it took.

    Inputs `input_ids` and `attention_mask`, int32 (batch, length); output `probabilities`, float32 (batch, K).
    """
    spec = [
        tf.TensorSpec((None, None), tf.int32, name="input_ids"),
        tf.TensorSpec((None, None), tf.int32, name="attention_mask"),
    ]

    @tf.function(input_signature=spec)
    def probabilities(input_ids, attention_mask):
        logits = model(input_ids=input_ids, attention_mask=attention_mask, training=False).logits  # (B, K)
        return tf.identity(tf.nn.softmax(tf.cast(logits, tf.float32), axis=-1), name="probabilities")

    return convert(probabilities, spec, path)


class OnnxForward:
    """`model.onnx` as the classifier's forward pass: (ids, mask) int32 (B, T) -> probabilities (B, K)."""

    def __init__(self, path: str | Path):
        self.session = Session(path)

    def __call__(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        return self.session(
            input_ids=np.asarray(input_ids, np.int32), attention_mask=np.asarray(attention_mask, np.int32)
        )


def write_checked(classifier, texts: list[str], reference: np.ndarray, run_dir: Path) -> dict[str, Any]:
    """The run's `model.onnx`, kept when it reproduces `reference` (TensorFlow's probabilities of `texts`)."""
    from finetune.predict import FinetunedClassifier

    def predict(path: Path) -> np.ndarray:
        onnx = FinetunedClassifier(
            classifier.model, classifier.tokenizer, classifier.labels, classifier.max_length, forward=OnnxForward(path)
        )
        return onnx.predict_proba(texts)

    return keep_if_faithful(run_dir, lambda path: convert_model(classifier.model, path), reference, predict)
