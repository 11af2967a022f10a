"""The fine-tuned side's `Classifier`: loads a run directory and predicts class probabilities.

Texts are tokenised in one batched call, grouped by length and each group padded to its own longest text.
The forward pass is one `tf.function` with an unknown batch and sequence length, traced once, so a single
text costs a few milliseconds instead of the tens `model.predict` spends setting up each call.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import tensorflow as tf

from finetune.pipeline import encode, length_batches, pad

PREDICT_BATCH = 64


class FinetunedClassifier:
    """A fine-tuned sequence-classification model with its tokenizer and label names.

    Attributes:
        name: how reports and the app call it.
        side: always `finetune`.
        labels: class names in label-id order.
        run: the parsed run.json (empty while the run is still being trained).
    """

    side = "finetune"

    def __init__(
        self,
        model: tf.keras.Model,
        tokenizer,
        labels: list[str],
        max_length: int,
        run: dict[str, Any] | None = None,
        batch_size: int = PREDICT_BATCH,
    ) -> None:
        self.name = self.side
        self.model = model
        self.tokenizer = tokenizer
        self.labels = list(labels)
        self.max_length = max_length
        self.run = run or {}
        self.batch_size = batch_size
        spec = tf.TensorSpec((None, None), tf.int32)
        self._probabilities = tf.function(self._forward, input_signature=[spec, spec])

    def _forward(self, input_ids: tf.Tensor, attention_mask: tf.Tensor) -> tf.Tensor:
        logits = self.model(input_ids=input_ids, attention_mask=attention_mask, training=False).logits  # (B, C)
        return tf.nn.softmax(tf.cast(logits, tf.float32), axis=-1)

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        """Class probabilities, shape (len(texts), len(labels)), rows summing to 1, in the order given."""
        texts = list(texts)
        probs = np.zeros((len(texts), len(self.labels)), dtype=np.float32)
        if not texts:
            return probs
        encoded = encode(self.tokenizer, texts, self.max_length)
        for batch in length_batches(encoded.lengths, self.batch_size):
            input_ids, mask = pad([encoded.ids[i] for i in batch], self.tokenizer.pad_token_id)
            probs[batch] = self._probabilities(input_ids, mask).numpy()
        return probs

    def predict(self, texts: list[str]) -> list[str]:
        """The most probable label name for each text."""
        return [self.labels[i] for i in self.predict_proba(texts).argmax(axis=1)]


def load(run_dir: Path, run: dict[str, Any]) -> FinetunedClassifier:
    """Loads the model and tokenizer saved in `run_dir` (called by `core.classifier.load`)."""
    from transformers import AutoTokenizer, TFAutoModelForSequenceClassification

    import finetune.modeling  # noqa: F401 - registers the mean-pooled model type a run may have

    model = TFAutoModelForSequenceClassification.from_pretrained(run_dir)
    tokenizer = AutoTokenizer.from_pretrained(run_dir)
    return FinetunedClassifier(model, tokenizer, run["data"]["labels"], run["data"]["options"]["max_length"], run)
