"""Token embeddings scaled by sqrt(d_model) plus the sinusoidal position encoding (for a pair task read as one
sequence, plus the segment embedding of each token's text, as BERT's token type; read as two texts, each text's
vectors apart, at its own positions); and the packaged checkpoint's token (and token type) vectors, narrowed to
d_model, for `--embeddings minilm`."""

from __future__ import annotations

import math

import numpy as np
import tensorflow as tf

from scratch.positional_encoding import SinusoidalPositionEncoding

PAD_ID = 0


def segment_ids(token_ids: tf.Tensor, separator_id: int) -> tf.Tensor:
    """Which text of a pair `text [SEP] text_pair` each position belongs to, BERT's token type: 0 up to and including
    the separator, 1 after it (padding included, which the mask hides). (B, T) ids -> (B, T) int64.

    >>> segment_ids(tf.constant([[5, 6, 2, 7, 0], [2, 8, 9, 9, 9]]), separator_id=2).numpy().tolist()
    [[0, 0, 0, 1, 1], [0, 1, 1, 1, 1]]
    """
    separators = tf.cast(tf.equal(token_ids, separator_id), tf.int64)  # (B, T)
    return tf.minimum(tf.math.cumsum(separators, axis=1, exclusive=True), 1)  # (B, T)


def pair_parts(
    token_ids: tf.Tensor, separator_id: int
) -> tuple[tuple[tf.Tensor, tf.Tensor], tuple[tf.Tensor, tf.Tensor]]:
    """Where the two texts of pairs `text [SEP] text_pair` stand: for each text, the (B, T_i) indices into the
    (B, T) ids of its tokens in order, and the bool (B, T_i) mask of the real ones (T_i: the batch's longest text,
    at least 1). The separator belongs to neither; ids without one are all the first text.

    >>> (first, first_real), (second, second_real) = pair_parts(tf.constant([[5, 6, 2, 7, 0], [8, 2, 9, 9, 9]]), 2)
    >>> first.numpy().tolist(), first_real.numpy().tolist()
    ([[0, 1], [0, 1]], [[True, True], [True, False]])
    >>> second.numpy().tolist(), second_real.numpy().tolist()
    ([[3, 4, 4], [2, 3, 4]], [[True, False, False], [True, True, True]])
    """
    length = tf.shape(token_ids)[1]
    real = tf.reduce_sum(tf.cast(tf.not_equal(token_ids, PAD_ID), tf.int32), axis=1)  # (B,)
    separators = tf.equal(token_ids, separator_id)  # (B, T)
    at = tf.where(
        tf.reduce_any(separators, axis=1), tf.argmax(tf.cast(separators, tf.int32), axis=1, output_type=tf.int32), real
    )  # (B,), the first separator's position
    lengths = (at, tf.maximum(real - at - 1, 0))  # (B,) each
    starts = (tf.zeros_like(at), at + 1)  # (B,) each
    parts = []
    for start, count in zip(starts, lengths):
        steps = tf.range(tf.maximum(tf.reduce_max(count), 1))[None, :]  # (1, T_i)
        indices = tf.minimum(start[:, None] + steps, length - 1)  # (B, T_i)
        parts.append((indices, steps < count[:, None]))  # (B, T_i), (B, T_i)
    return parts[0], parts[1]


@tf.keras.saving.register_keras_serializable(package="scratch")
class TokenAndPositionEmbedding(tf.keras.layers.Layer):
    """Maps token ids (B, T) to vectors (B, T, C) and emits the padding mask (id 0 is padding).

    With `separator_id`, the ids are pairs `text [SEP] text_pair` and each token's vector also gets its segment's
    (`segment_ids`; like the token vectors, scaled by sqrt(d_model)). With `split_pairs` as well, the pair is read as
    two texts: the token vectors (looked up once, over the joint ids) are cut into each text's own sequence
    (`pair_parts`), each at positions from 0 and without segment vectors, so a text gets the same vectors whichever
    side of the pair it is on; the layer then returns the two sequences [(B, T1, C), (B, T2, C)] with their masks.

    Args:
        vocab_size: number of token ids, padding included.
        d_model: width C of the vectors.
        dropout: dropout rate applied to the sum, as in the original Transformer.
        separator_id: the id between the two texts of a pair; None for single texts (no segment embedding).
        split_pairs: return each text of a pair as a sequence of its own (needs `separator_id`).
    """

    def __init__(
        self,
        vocab_size: int,
        d_model: int,
        dropout: float = 0.0,
        separator_id: int | None = None,
        split_pairs: bool = False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if split_pairs and separator_id is None:
            raise ValueError("split_pairs cuts pairs at their separator; give separator_id.")
        self.vocab_size = vocab_size
        self.d_model = d_model
        self.dropout = dropout
        self.separator_id = separator_id
        self.split_pairs = split_pairs
        self.supports_masking = True

    def build(self, input_shape):
        self.token_embedding = tf.keras.layers.Embedding(
            self.vocab_size,
            self.d_model,
            embeddings_initializer=tf.keras.initializers.RandomNormal(stddev=self.d_model**-0.5),
            name="token_embedding",
        )
        self.token_embedding.build(input_shape)
        if self.separator_id is not None and not self.split_pairs:
            self.segment_embedding = tf.keras.layers.Embedding(
                2,
                self.d_model,
                embeddings_initializer=tf.keras.initializers.RandomNormal(stddev=self.d_model**-0.5),
                name="segment_embedding",
            )
            self.segment_embedding.build(input_shape)
        self.position_encoding = SinusoidalPositionEncoding(name="position_encoding")
        self.dropout_layer = tf.keras.layers.Dropout(self.dropout)
        super().build(input_shape)

    def call(self, token_ids: tf.Tensor, training: bool | None = None, start: int | tf.Tensor = 0) -> tf.Tensor:
        """`start`: the position of the first id, for every row or one per row (B,) (a cached decoding step embeds
        one id at its position)."""
        return self.from_vectors(self.token_embedding(token_ids), token_ids, training, start)

    def from_vectors(
        self, x: tf.Tensor, token_ids: tf.Tensor, training: bool | None = None, start: int | tf.Tensor = 0
    ) -> tf.Tensor:
        """The layer's output from the token vectors (B, T, C) of `token_ids` (B, T), however they were found: the
        lookup `call` makes, or the points along an attribution's path from a baseline to them."""
        if self.split_pairs:
            return [self._place(part, training) for part in self._parts(x, token_ids)]  # [(B, T1, C), (B, T2, C)]
        if self.separator_id is not None:
            x = x + self.segment_embedding(segment_ids(token_ids, self.separator_id))  # (B, T, C)
        return self._place(x, training, start)  # (B, T, C)

    def _place(self, x: tf.Tensor, training: bool | None, start: int | tf.Tensor = 0) -> tf.Tensor:
        """Token vectors (B, T, C) scaled, at their positions from `start`, dropped out."""
        x = x * tf.cast(math.sqrt(self.d_model), self.compute_dtype)  # (B, T, C)
        x = self.position_encoding(x, start=start)  # (B, T, C)
        return self.dropout_layer(x, training=training)

    def _parts(self, x: tf.Tensor, token_ids: tf.Tensor) -> list[tf.Tensor]:
        """The token vectors (B, T, C) of each text of the pairs, padding zeroed: [(B, T1, C), (B, T2, C)]."""
        parts = []
        for indices, real in pair_parts(token_ids, self.separator_id):
            part = tf.gather(x, indices, axis=1, batch_dims=1)  # (B, T_i, C)
            parts.append(part * tf.cast(real, part.dtype)[:, :, None])
        return parts

    def compute_mask(self, token_ids, mask=None):
        if self.split_pairs:
            return [real for _, real in pair_parts(token_ids, self.separator_id)]  # [(B, T1), (B, T2)]
        return tf.not_equal(token_ids, PAD_ID)  # (B, T)

    def compute_output_shape(self, input_shape):
        shape = tf.TensorShape([input_shape[0], None, self.d_model])
        return [shape, shape] if self.split_pairs else tf.TensorShape(input_shape).concatenate([self.d_model])

    def get_config(self):
        return {
            **super().get_config(),
            "vocab_size": self.vocab_size,
            "d_model": self.d_model,
            "dropout": self.dropout,
            "separator_id": self.separator_id,
            "split_pairs": self.split_pairs,
        }


def minilm_vectors(d_model: int) -> tuple[np.ndarray, np.ndarray]:
    """The packaged all-MiniLM-L6-v2's token vectors (one per WordPiece id, 384 wide) on their first `d_model`
    principal components, scaled to the standard deviation of the random initialiser above (d_model ** -0.5); and
    its two token type vectors, which BERT adds to the token vectors, through the same projection and scale.

    Returns: (vocabulary, d_model) float32, row i for WordPiece id i; (2, d_model) float32, row s for segment s.
    """
    from safetensors.numpy import load_file

    from core.pretrained import packaged_minilm

    weights = load_file(packaged_minilm() / "model.safetensors")
    vectors = weights["embeddings.word_embeddings.weight"]  # (V, 384)
    centred = vectors - vectors.mean(axis=0)  # (V, 384)
    _, _, components = np.linalg.svd(centred, full_matrices=False)  # (384, 384), rows by explained variance
    projected = centred @ components[:d_model].T  # (V, d_model)
    scale = d_model**-0.5 / projected.std()
    segments = weights["embeddings.token_type_embeddings.weight"] @ components[:d_model].T  # (2, d_model)
    return (projected * scale).astype(np.float32), (segments * scale).astype(np.float32)
