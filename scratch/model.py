"""The from-scratch Transformer classifier: the model builders (its configuration and presets: `scratch.config`).

    token ids (B, T) ──embedding (+ segments) + sinusoids──► (B, T, C) ──N encoder blocks──► (B, T, C)
        ──masked mean pooling (or last real token with causal)──► (B, C) ──dense──► logits (B, K)

A pair task's ids `text [SEP] text_pair` are read by `--pair-reading` (`READINGS`): `joint` as above, one sequence
with segment embeddings; `siamese` cuts the embedded pair into its two texts, each encoded alone by the same blocks
and pooled to u and v, which meet in [u, v, |u - v|, u * v] (InferSent; `scratch.pair_features`) and a hidden layer
before the head; `cross` lets the two encoded texts attend to each other first (`scratch.cross_attention`), then
pools and meets them the same way.

The end-to-end model puts the tokenizer in front and the problem type's output behind, so the saved `.keras`
file maps raw strings (B,) (for a pair task, two inputs `text` and `text_pair`, joined as `text [SEP] text_pair`)
to class probabilities (B, K) (softmax; a sigmoid per label for multi-label) or, for regression, values (B,). With
`--embeddings minilm` the token vectors (and for pairs the segment vectors) come from the packaged checkpoint
(narrowed to d_model) and stay frozen while the rest of the network learns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import tensorflow as tf

from core import kinds
from core.kinds import Kind
from scratch.config import DEFAULT_PRESET, PRESETS, ModelConfig, config_from_preset
from scratch.cross_attention import CrossAttention
from scratch.embedding import PAD_ID, TokenAndPositionEmbedding, minilm_vectors, pair_parts
from scratch.encoder import TransformerEncoderBlock
from scratch.pair_features import PairFeatures
from scratch.pooling import LastTokenPooling, MaskedMeanPooling

__all__ = ["DEFAULT_PRESET", "PRESETS", "ModelConfig", "build_classifier", "build_end_to_end", "config_from_preset"]


@dataclass(frozen=True)
class Reading:
    """How the network reads its input (`ModelConfig.pair_reading`; a single text is read as `joint`).

    Attributes:
        splits: the embedding returns each text of a pair as a sequence of its own.
        read: (embedded sequence(s), the shared encoder, the config) -> the vector the head reads (B, F).
    """

    splits: bool
    read: Callable[[Any, Callable[[tf.Tensor], tf.Tensor], ModelConfig], tf.Tensor]


def _pooling(config: ModelConfig) -> tf.keras.layers.Layer:
    return (LastTokenPooling if config.causal else MaskedMeanPooling)(name="pooling")


def _read_joint(x: tf.Tensor, encode: Callable, config: ModelConfig) -> tf.Tensor:
    return _pooling(config)(encode(x))  # (B, C)


def _read_siamese(texts: list[tf.Tensor], encode: Callable, config: ModelConfig) -> tf.Tensor:
    pooling = _pooling(config)
    u, v = (pooling(encode(text)) for text in texts)  # (B, C) each, by the same weights
    return _pair_head(PairFeatures(name="pair_features")([u, v]), config)  # (B, C)


def _read_cross(texts: list[tf.Tensor], encode: Callable, config: ModelConfig) -> tf.Tensor:
    a, b = (encode(text) for text in texts)  # (B, T1, C), (B, T2, C)
    a, b = CrossAttention(config.activation, config.dropout, name="cross_attention")([a, b])
    pooling = _pooling(config)
    return _pair_head(PairFeatures(name="pair_features")([pooling(a), pooling(b)]), config)  # (B, C)


def _pair_head(features: tf.Tensor, config: ModelConfig) -> tf.Tensor:
    """InferSent's classifier input (B, 4C) through one hidden layer (B, C), as its MLP."""
    x = tf.keras.layers.Dropout(config.dropout, name="pair_dropout")(features)
    return tf.keras.layers.Dense(config.d_model, activation=config.activation, name="pair_hidden")(x)


READINGS: dict[str, Reading] = {
    "joint": Reading(splits=False, read=_read_joint),
    "siamese": Reading(splits=True, read=_read_siamese),
    "cross": Reading(splits=True, read=_read_cross),
}


def build_classifier(
    config: ModelConfig, vocab_size: int | None = None, separator_id: int | None = None, name: str = "classifier"
) -> tf.keras.Model:
    """Token ids (B, T) -> logits (B, num_labels). `vocab_size` is the tokenizer's actual vocabulary size;
    `separator_id` its separator's id, which a pair task's model needs (`config.pairs`).

    Every reading goes through the one `embedding` layer, which looks the token vectors up once over the ids as
    the tokenizer gives them (`text [SEP] text_pair` for pairs), and through the same encoder blocks."""
    if config.pairs and separator_id is None:
        raise ValueError("A pair task's model needs the tokenizer's separator id to tell the two texts apart.")
    reading = READINGS[config.pair_reading or "joint"]
    token_ids = tf.keras.Input(shape=(None,), dtype=tf.int64, name="token_ids")  # (B, T)
    embedded = TokenAndPositionEmbedding(
        vocab_size or config.vocab_size,
        config.d_model,
        config.dropout,
        separator_id=separator_id if config.pairs else None,
        split_pairs=reading.splits,
        name="embedding",
    )(token_ids)  # (B, T, C), or each text's (B, T_i, C); with the padding mask(s) attached
    x = reading.read(embedded, encoder(config), config)  # (B, F)
    x = tf.keras.layers.Dropout(config.dropout, name="head_dropout")(x)
    logits = tf.keras.layers.Dense(config.num_labels, dtype="float32", name="logits")(x)  # (B, K)
    classifier = tf.keras.Model(token_ids, logits, name=name)
    if config.embeddings == "minilm":  # the checkpoint's vectors, kept as they are while the rest learns
        embedding = classifier.get_layer("embedding")
        tokens, segments = minilm_vectors(config.d_model)
        embedding.token_embedding.set_weights([tokens])
        embedding.token_embedding.trainable = False
        if config.pairs and not reading.splits:
            embedding.segment_embedding.set_weights([segments])
            embedding.segment_embedding.trainable = False
    return classifier


def encoder(config: ModelConfig) -> Callable[[tf.Tensor], tf.Tensor]:
    """The encoder blocks (and a pre-LN stack's final LayerNorm) as one function (B, T, C) -> (B, T, C); each call
    reuses the same layers, so the two texts of a pair are read by the same weights."""
    blocks = [
        TransformerEncoderBlock(
            config.num_heads,
            config.d_ff,
            dropout=config.dropout,
            activation=config.activation,
            norm=config.norm,
            causal=config.causal,
            name=f"encoder_{i}",
        )
        for i in range(config.num_layers)
    ]
    if config.norm == "pre":
        blocks.append(tf.keras.layers.LayerNormalization(epsilon=1e-5, name="final_norm"))

    def encode(x: tf.Tensor) -> tf.Tensor:
        for block in blocks:
            x = block(x)  # (B, T, C)
        return x

    return encode


def attention_maps(embedding: tf.keras.layers.Layer, blocks: list, token_ids: tf.Tensor) -> tf.Tensor:
    """The encoder's self-attention weights over one input's ids (1, T) as the tokenizer gives them: (L, H, T, T),
    row i how token i spread its attention (rows sum to 1). A pair read as two texts has each text's maps in its
    own block (a text never attends to the other one) and its separator, which neither text reads, on itself."""
    padding_mask = tf.not_equal(token_ids, PAD_ID)  # (1, T)
    if not embedding.split_pairs:
        return tf.stack(_self_attention(embedding(token_ids, training=False), padding_mask, blocks))  # (L, H, T, T)
    length = tf.shape(token_ids)[1]
    separator = tf.cast(tf.equal(token_ids[0], embedding.separator_id), tf.float32)  # (T,)
    maps = tf.zeros([len(blocks), blocks[0].num_heads, length, length]) + tf.linalg.diag(separator)  # (L, H, T, T)
    for x, (indices, real) in zip(embedding(token_ids, training=False), pair_parts(token_ids, embedding.separator_id)):
        weights = tf.stack(_self_attention(x, real, blocks))  # (L, H, T_i, T_i)
        weights *= tf.cast(real[0][:, None] & real[0][None, :], weights.dtype)  # padding rows and columns out
        at = tf.stack(tf.meshgrid(indices[0], indices[0], indexing="ij"), axis=-1)  # (T_i, T_i, 2) joint positions
        grid = tf.transpose(maps, [2, 3, 0, 1])  # (T, T, L, H)
        maps = tf.transpose(tf.tensor_scatter_nd_add(grid, at, tf.transpose(weights, [2, 3, 0, 1])), [2, 3, 0, 1])
    return maps


def _self_attention(x: tf.Tensor, padding_mask: tf.Tensor, blocks: list) -> list[tf.Tensor]:
    maps = []
    for block in blocks:
        x, weights = block(x, padding_mask=padding_mask, training=False, return_attention_scores=True)
        maps.append(weights[0])  # (H, T, T)
    return maps


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
