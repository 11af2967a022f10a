"""The from-scratch Transformer classifier: the model builders (its configuration and presets: `scratch.config`).

    token ids (B, T) ──embedding + sinusoids──► (B, T, C) ──N encoder blocks──► (B, T, C)
        ──masked mean pooling (or last real token with causal)──► (B, C) ──dense──► logits (B, K)

The end-to-end model puts the tokenizer in front and a softmax behind, so the saved `.keras` file maps raw
strings (B,) to class probabilities (B, K). With `--embeddings minilm` the token vectors come from the packaged
checkpoint (narrowed to d_model) and stay frozen while the rest of the network learns.
"""

from __future__ import annotations

import tensorflow as tf

from scratch.config import DEFAULT_PRESET, PRESETS, ModelConfig, config_from_preset
from scratch.embedding import TokenAndPositionEmbedding, minilm_token_vectors
from scratch.encoder import TransformerEncoderBlock
from scratch.pooling import LastTokenPooling, MaskedMeanPooling

__all__ = ["DEFAULT_PRESET", "PRESETS", "ModelConfig", "build_classifier", "build_end_to_end", "config_from_preset"]


def build_classifier(config: ModelConfig, vocab_size: int | None = None, name: str = "classifier") -> tf.keras.Model:
    """Token ids (B, T) -> logits (B, num_labels). `vocab_size` is the tokenizer's actual vocabulary size."""
    token_ids = tf.keras.Input(shape=(None,), dtype=tf.int64, name="token_ids")  # (B, T)
    x = TokenAndPositionEmbedding(vocab_size or config.vocab_size, config.d_model, config.dropout, name="embedding")(
        token_ids
    )  # (B, T, C), with the padding mask attached
    for i in range(config.num_layers):
        x = TransformerEncoderBlock(
            config.num_heads,
            config.d_ff,
            dropout=config.dropout,
            activation=config.activation,
            norm=config.norm,
            causal=config.causal,
            name=f"encoder_{i}",
        )(x)  # (B, T, C)
    if config.norm == "pre":
        x = tf.keras.layers.LayerNormalization(epsilon=1e-5, name="final_norm")(x)  # (B, T, C)
    pooling = LastTokenPooling if config.causal else MaskedMeanPooling
    x = pooling(name="pooling")(x)  # (B, C)
    x = tf.keras.layers.Dropout(config.dropout, name="head_dropout")(x)
    logits = tf.keras.layers.Dense(config.num_labels, dtype="float32", name="logits")(x)  # (B, K)
    classifier = tf.keras.Model(token_ids, logits, name=name)
    if config.embeddings == "minilm":  # the checkpoint's vectors, kept as they are while the rest learns
        token_embedding = classifier.get_layer("embedding").token_embedding
        token_embedding.set_weights([minilm_token_vectors(config.d_model)])
        token_embedding.trainable = False
    return classifier


def build_end_to_end(tokenizer: tf.keras.layers.Layer, classifier: tf.keras.Model) -> tf.keras.Model:
    """Raw strings (B,) -> class probabilities (B, K): the model a run saves."""
    texts = tf.keras.Input(shape=(), dtype=tf.string, name="text")  # (B,)
    token_ids = tokenizer(texts)  # (B, T)
    probabilities = tf.keras.layers.Softmax(dtype="float32", name="probabilities")(classifier(token_ids))  # (B, K)
    return tf.keras.Model(texts, probabilities, name="scratch_transformer")
