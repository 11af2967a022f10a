"""The from-scratch Transformer classifier: the model builders (its configuration and presets: `scratch.config`).

    token ids (B, T) ──embedding (+ segments) + sinusoids──► (B, T, C) ──N encoder blocks──► (B, T, C)
        ──masked mean pooling (or last real token with causal)──► (B, C) ──dense──► logits (B, K)

The end-to-end model puts the tokenizer in front and the problem type's output behind, so the saved `.keras`
file maps raw strings (B,) (for a pair task, two inputs `text` and `text_pair`, joined as `text [SEP] text_pair`)
to class probabilities (B, K) (softmax; a sigmoid per label for multi-label) or, for regression, values (B,). With
`--embeddings minilm` the token vectors (and for pairs the segment vectors) come from the packaged checkpoint
(narrowed to d_model) and stay frozen while the rest of the network learns.
"""

from __future__ import annotations

import tensorflow as tf

from core import kinds
from core.kinds import Kind
from scratch.config import DEFAULT_PRESET, PRESETS, ModelConfig, config_from_preset
from scratch.embedding import TokenAndPositionEmbedding, minilm_vectors
from scratch.encoder import TransformerEncoderBlock
from scratch.pooling import LastTokenPooling, MaskedMeanPooling

__all__ = ["DEFAULT_PRESET", "PRESETS", "ModelConfig", "build_classifier", "build_end_to_end", "config_from_preset"]


def build_classifier(
    config: ModelConfig, vocab_size: int | None = None, separator_id: int | None = None, name: str = "classifier"
) -> tf.keras.Model:
    """Token ids (B, T) -> logits (B, num_labels). `vocab_size` is the tokenizer's actual vocabulary size;
    `separator_id` its separator's id, which a pair task's model needs (`config.pairs`)."""
    if config.pairs and separator_id is None:
        raise ValueError("A pair task's model needs the tokenizer's separator id to tell the two texts apart.")
    token_ids = tf.keras.Input(shape=(None,), dtype=tf.int64, name="token_ids")  # (B, T)
    x = TokenAndPositionEmbedding(
        vocab_size or config.vocab_size,
        config.d_model,
        config.dropout,
        separator_id=separator_id if config.pairs else None,
        name="embedding",
    )(token_ids)  # (B, T, C), with the padding mask attached
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
        embedding = classifier.get_layer("embedding")
        tokens, segments = minilm_vectors(config.d_model)
        embedding.token_embedding.set_weights([tokens])
        embedding.token_embedding.trainable = False
        if config.pairs:
            embedding.segment_embedding.set_weights([segments])
            embedding.segment_embedding.trainable = False
    return classifier


def build_end_to_end(
    tokenizer: tf.keras.layers.Layer, classifier: tf.keras.Model, kind: Kind | None = None, pairs: bool = False
) -> tf.keras.Model:
    """Raw strings (B,) -> class probabilities (B, K) or values (B,): the model a run saves, the kind's output layer
    (`Kind.output_layer`, default single label's softmax) on the classifier's logits. With `pairs`, it takes two
    inputs, `text` and `text_pair` (B,) each."""
    texts = tf.keras.Input(shape=(), dtype=tf.string, name="text")  # (B,)
    if pairs:
        text_pairs = tf.keras.Input(shape=(), dtype=tf.string, name="text_pair")  # (B,)
        inputs, token_ids = [texts, text_pairs], tokenizer(texts, text_pairs)  # (B, T)
    else:
        inputs, token_ids = texts, tokenizer(texts)  # (B, T)
    outputs = (kind or kinds.get(None)).output_layer()(classifier(token_ids))  # (B, K) or (B,)
    return tf.keras.Model(inputs, outputs, name="scratch_transformer")
