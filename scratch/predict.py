"""Loads a finished scratch run as a `core.classifier.Classifier`, with attention maps for the app.

Probabilities come from the run's `model.onnx` in ONNX Runtime when run.json's `serving` says it reproduces the
TensorFlow model (`scratch.onnx`), else from the end-to-end Keras model in one `tf.function`.
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
from core.runtime import STRINGS
from scratch.embedding import PAD_ID
from scratch.encoder import TransformerEncoderBlock

# Imported for what they register: every layer class a saved end-to-end model names.
from scratch.model import build_end_to_end  # noqa: F401
from scratch.schedule import WarmupInverseSqrt  # noqa: F401
from scratch.tokenizer import WordPieceTokenizer, WordTokenizer  # noqa: F401

DEFAULT_MODEL_FILE = "model.keras"


class ScratchClassifier:
    """A trained from-scratch Transformer: raw strings in, class probabilities out.

    Args:
        model: the end-to-end Keras model (strings (B,) -> probabilities (B, K)).
        run: the parsed run.json.
        forward: texts -> probabilities (B, K) in place of the Keras model (the ONNX Runtime path).
    """

    side = "scratch"

    def __init__(
        self,
        model: tf.keras.Model,
        run: dict[str, Any],
        forward: Callable[[list[str]], np.ndarray] | None = None,
    ):
        self.model = model
        self.run = run
        self.name = "scratch"
        self.labels = list(run["data"]["labels"])
        self.tokenizer = model.get_layer("tokenizer")
        classifier = model.get_layer("classifier")
        self.embedding = classifier.get_layer("embedding")
        self.blocks = [layer for layer in classifier.layers if isinstance(layer, TransformerEncoderBlock)]
        self.runtime = "onnxruntime" if forward is not None else "tensorflow"
        if forward is None:
            graph = tf.function(lambda texts: model(texts, training=False), input_signature=[STRINGS])
            forward = lambda texts: graph(tf.constant(texts, tf.string)).numpy()  # noqa: E731
        self._probabilities = forward
        self._attention = tf.function(self._attention_maps, input_signature=[tf.TensorSpec([1], tf.string)])

    def predict_proba(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        """Probabilities (len(texts), len(labels)), rows summing to 1.

        Texts are sorted by length so that each batch is padded to little more than its own texts.
        """
        texts = [str(text) for text in texts]
        probabilities = predict_in_batches(self._probabilities, texts, batch_size, len(self.labels))
        return probabilities / probabilities.sum(axis=1, keepdims=True)

    def _attention_maps(self, text: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        token_ids = self.tokenizer(text)  # (1, T)
        padding_mask = tf.not_equal(token_ids, PAD_ID)  # (1, T)
        x = self.embedding(token_ids, training=False)  # (1, T, C)
        maps = []
        for block in self.blocks:
            x, weights = block(x, padding_mask=padding_mask, training=False, return_attention_scores=True)
            maps.append(weights[0])  # (H, T, T)
        return token_ids[0], tf.stack(maps)  # (T,), (L, H, T, T)

    def explain(self, text: str) -> tuple[list[str], np.ndarray]:
        """The text's tokens as the model saw them and its attention weights, (layers, heads, T, T).

        Row i of a map is how token i spread its attention over the tokens (each row sums to 1).
        """
        token_ids, maps = self._attention(tf.constant([str(text)], tf.string))
        vocabulary = self.tokenizer.vocabulary
        tokens = [vocabulary[i] if vocabulary[i] else "[PAD]" for i in token_ids.numpy().tolist()]
        return tokens, maps.numpy()


def load(run_dir: Path, run: dict[str, Any], runtime: str | None = None) -> ScratchClassifier:
    """Loads `run_dir/model.keras` with Keras safe mode on (called by `core.classifier.load`).

    Args:
        runtime: `tensorflow` or `onnxruntime`; by default ONNX Runtime when run.json's `serving.runtime` names it
            and `onnxruntime` imports, else TensorFlow.
    """
    path = Path(run_dir) / run.get("model", {}).get("file", DEFAULT_MODEL_FILE)
    if not path.is_file():
        raise RunError(f"{run_dir} has no {path.name}; the run is incomplete, train it again with python -m scratch.")
    model = tf.keras.models.load_model(path, compile=False, safe_mode=True)
    if (runtime or serving_runtime(run)) == "onnxruntime":
        from scratch.onnx import OnnxForward

        forward = OnnxForward(onnx_path(run_dir, run), model.get_layer("tokenizer"))
        return ScratchClassifier(model, run, forward=forward)
    return ScratchClassifier(model, run)
