"""Token embeddings scaled by sqrt(d_model) plus the sinusoidal position encoding; and the packaged checkpoint's
token vectors, narrowed to d_model, for `--embeddings minilm`."""

from __future__ import annotations

import math

import numpy as np
import tensorflow as tf

from scratch.positional_encoding import SinusoidalPositionEncoding

PAD_ID = 0


@tf.keras.saving.register_keras_serializable(package="scratch")
class TokenAndPositionEmbedding(tf.keras.layers.Layer):
    """Maps token ids (B, T) to vectors (B, T, C) and emits the padding mask (id 0 is padding).

    Args:
        vocab_size: number of token ids, padding included.
        d_model: width C of the vectors.
        dropout: dropout rate applied to the sum, as in the original Transformer.
    """

    def __init__(self, vocab_size: int, d_model: int, dropout: float = 0.0, **kwargs):
        super().__init__(**kwargs)
        self.vocab_size = vocab_size
        self.d_model = d_model
        self.dropout = dropout
        self.supports_masking = True

    def build(self, input_shape):
        self.token_embedding = tf.keras.layers.Embedding(
            self.vocab_size,
            self.d_model,
            embeddings_initializer=tf.keras.initializers.RandomNormal(stddev=self.d_model**-0.5),
            name="token_embedding",
        )
        self.token_embedding.build(input_shape)
        self.position_encoding = SinusoidalPositionEncoding(name="position_encoding")
        self.dropout_layer = tf.keras.layers.Dropout(self.dropout)
        super().build(input_shape)

    def call(self, token_ids: tf.Tensor, training: bool | None = None, start: int | tf.Tensor = 0) -> tf.Tensor:
        """`start`: the position of the first id, for every row or one per row (B,) (a cached decoding step embeds
        one id at its position)."""
        x = self.token_embedding(token_ids) * tf.cast(math.sqrt(self.d_model), self.compute_dtype)  # (B, T, C)
        x = self.position_encoding(x, start=start)  # (B, T, C)
        return self.dropout_layer(x, training=training)

    def compute_mask(self, token_ids, mask=None):
        return tf.not_equal(token_ids, PAD_ID)  # (B, T)

    def compute_output_shape(self, input_shape):
        return tf.TensorShape(input_shape).concatenate([self.d_model])

    def get_config(self):
        return {**super().get_config(), "vocab_size": self.vocab_size, "d_model": self.d_model, "dropout": self.dropout}


def minilm_token_vectors(d_model: int) -> np.ndarray:
    """The packaged all-MiniLM-L6-v2's token vectors (one per WordPiece id, 384 wide) on their first `d_model`
    principal components, scaled to the standard deviation of the random initialiser above (d_model ** -0.5).

    Returns: (vocabulary, d_model) float32, row i for WordPiece id i.
    """
    from safetensors.numpy import load_file

    from core.pretrained import packaged_minilm

    vectors = load_file(packaged_minilm() / "model.safetensors")["embeddings.word_embeddings.weight"]  # (V, 384)
    centred = vectors - vectors.mean(axis=0)  # (V, 384)
    _, _, components = np.linalg.svd(centred, full_matrices=False)  # (384, 384), rows by explained variance
    projected = centred @ components[:d_model].T  # (V, d_model)
    return (projected * (d_model**-0.5 / projected.std())).astype(np.float32)
