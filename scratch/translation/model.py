"""The translation models: the encoder-decoder Transformer and its GPT-style decoder-only variant.

Both share one embedding table for every token of the joint vocabulary and, by default, use it again
(transposed) as the output projection. Their shape is a `scratch.translation.config.TranslationConfig`.

Both decode through `scratch.translation.decoding`: `start_decoding` makes the key/value caches of a source batch,
`step` feeds one token per row and returns the next token's logits with the caches updated.
"""

from __future__ import annotations

import tensorflow as tf

from scratch.embedding import TokenAndPositionEmbedding
from scratch.encoder import TransformerEncoderBlock
from scratch.translation.causal_block import CausalSelfAttentionBlock
from scratch.translation.config import TranslationConfig
from scratch.translation.decoder import TransformerDecoderBlock
from scratch.translation.losses import masked_accuracy, masked_loss
from scratch.translation.tokenizer import PAD_ID


@tf.keras.saving.register_keras_serializable(package="scratch")
class TiedOutput(tf.keras.layers.Layer):
    """Logits from the embedding table, transposed, plus a bias of its own: x (B, T, C) -> (B, T, V).

    Args:
        vocab_size: V, the rows of the table it is called with.

    Call args:
        inputs: (B, T, C).
        table: (V, C), the token embedding matrix.
    """

    def __init__(self, vocab_size: int, **kwargs):
        super().__init__(**kwargs)
        self.vocab_size = vocab_size

    def build(self, input_shape):
        self.bias = self.add_weight(name="bias", shape=[self.vocab_size], initializer="zeros")
        super().build(input_shape)

    def call(self, inputs: tf.Tensor, table: tf.Tensor) -> tf.Tensor:
        return tf.matmul(inputs, tf.cast(table, inputs.dtype), transpose_b=True) + tf.cast(self.bias, inputs.dtype)

    def compute_output_shape(self, input_shape):
        return tf.TensorShape(input_shape)[:-1].concatenate([self.vocab_size])

    def get_config(self):
        return {**super().get_config(), "vocab_size": self.vocab_size}


class TranslationModel(tf.keras.Model):
    """What both architectures share: the embedding, the output projection, the training loss and the config round
    trip.

    Args:
        config: the network's shape.
        label_smoothing: of the training loss's targets (`masked_loss`); evaluation reports the unsmoothed
            cross-entropy.
    """

    def __init__(self, config: TranslationConfig | dict, label_smoothing: float = 0.0, **kwargs):
        super().__init__(**kwargs)
        self.config = config if isinstance(config, TranslationConfig) else TranslationConfig(**config)
        c = self.config
        self.embedding = TokenAndPositionEmbedding(c.vocab_size, c.d_model, dropout=c.dropout, name="embedding")
        self.output_projection = (
            TiedOutput(c.vocab_size, name="tied_output")
            if c.tie_embeddings
            else tf.keras.layers.Dense(c.vocab_size, name="output_projection")
        )
        self.label_smoothing = label_smoothing
        self.loss_tracker = tf.keras.metrics.Mean(name="loss")
        self.accuracy_tracker = tf.keras.metrics.Mean(name="accuracy")

    @property
    def metrics(self):
        return [self.loss_tracker, self.accuracy_tracker]

    def _track(self, labels, logits, loss):
        correct, counted = masked_accuracy(labels, logits)
        self.loss_tracker.update_state(loss, sample_weight=counted)  # averages over tokens, not batches
        self.accuracy_tracker.update_state(correct / tf.maximum(counted, 1.0), sample_weight=counted)
        return {m.name: m.result() for m in self.metrics}

    def train_step(self, data):
        inputs, labels = data
        with tf.GradientTape() as tape:
            logits = self(inputs, training=True)
            loss = masked_loss(labels, logits, self.label_smoothing)
            replicas = tf.distribute.get_strategy().num_replicas_in_sync  # gradients are summed over replicas
            scaled = loss / replicas
        self.optimizer.minimize(scaled, self.trainable_variables, tape=tape)
        return self._track(labels, logits, loss)

    def test_step(self, data):
        inputs, labels = data
        logits = self(inputs, training=False)
        return self._track(labels, logits, masked_loss(labels, logits))

    def logits(self, x: tf.Tensor) -> tf.Tensor:
        """(B, T, C) final hidden states -> (B, T, V) next-token logits."""
        if self.config.tie_embeddings:
            return self.output_projection(x, self.embedding.token_embedding.embeddings)
        return self.output_projection(x)

    def _blocks(self, block_class, prefix: str, **kwargs) -> list:
        c = self.config
        return [
            block_class(
                c.num_heads,
                c.d_ff,
                dropout=c.dropout,
                activation=c.activation,
                norm=c.norm,
                name=f"{prefix}_{i}",
                **kwargs,
            )
            for i in range(c.num_layers)
        ]

    def _final_norm(self, name: str):
        """pre-LN leaves the residual stream unnormalised; one LayerNorm closes the stack."""
        return tf.keras.layers.LayerNormalization(epsilon=1e-5, name=name) if self.config.norm == "pre" else None

    def dummy_inputs(self):
        """A one-sentence batch that creates every weight when the model is called on it."""
        raise NotImplementedError

    def _empty_cache(self, batch: tf.Tensor, slots: tf.Tensor, dtype: tf.DType) -> tuple[tf.Tensor, tf.Tensor]:
        """One block's key/value cache with nothing written yet: keys and values, two (B, H, slots, D)."""
        c = self.config
        empty = tf.zeros([batch, c.num_heads, slots, c.d_model // c.num_heads], dtype)
        return empty, empty

    def build_from_config(self, config):
        self(self.dummy_inputs())  # two inputs: Keras's recorded input shape cannot rebuild the model

    def get_config(self):
        return {"config": self.config.to_dict(), "label_smoothing": self.label_smoothing, "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


@tf.keras.saving.register_keras_serializable(package="scratch")
class EncoderDecoder(TranslationModel):
    """Source ids (B, Ts) and shifted target ids (B, Tt) -> next-token logits (B, Tt, V)."""

    def __init__(self, config: TranslationConfig | dict, **kwargs):
        super().__init__(config, **kwargs)
        self.encoder_blocks = self._blocks(TransformerEncoderBlock, "encoder")
        self.decoder_blocks = self._blocks(TransformerDecoderBlock, "decoder")
        self.encoder_norm = self._final_norm("encoder_norm")
        self.decoder_norm = self._final_norm("decoder_norm")

    def dummy_inputs(self):
        return (tf.ones([1, 2], tf.int32), tf.ones([1, 2], tf.int32))

    def call(self, inputs, training=None):
        source, target = inputs
        memory, source_mask = self.encode(source, training=training)
        return self.decode(target, memory, source_mask, training=training)

    def encode(self, source: tf.Tensor, training=None) -> tuple[tf.Tensor, tf.Tensor]:
        """(B, Ts) ids -> encoder output (B, Ts, C) and the source padding mask (B, Ts)."""
        source_mask = tf.not_equal(source, 0)  # (B, Ts)
        x = self.embedding(source, training=training)  # (B, Ts, C)
        for block in self.encoder_blocks:
            x = block(x, padding_mask=source_mask, training=training)
        if self.encoder_norm is not None:
            x = self.encoder_norm(x)
        return x, source_mask

    def decode(self, target, memory, source_mask, training=None, return_attention=False):
        """(B, Tt) target ids -> logits (B, Tt, V); with `return_attention`, also (L, B, H, Tt, Ts) cross weights."""
        target_mask = tf.not_equal(target, 0)  # (B, Tt)
        x = self.embedding(target, training=training)  # (B, Tt, C)
        weights = []
        for block in self.decoder_blocks:
            x, w = block(
                x,
                memory,
                memory_mask=source_mask,
                padding_mask=target_mask,
                training=training,
                return_attention_scores=True,
            )
            weights.append(w)
        if self.decoder_norm is not None:
            x = self.decoder_norm(x)
        logits = self.logits(x)
        return (logits, tf.stack(weights)) if return_attention else logits

    def start_decoding(self, source: tf.Tensor, length: tf.Tensor) -> tuple[list, dict, tf.Tensor]:
        """What decoding `source` (B, Ts) for up to `length` output tokens starts from.

        Returns:
            The self-attention caches, one (keys, values) pair of (B, H, length, D) per block, empty (they follow
            the hypotheses); the context, fixed per sentence: the cross-attention keys and values of the encoder
            output and the source mask; and each row's first output position (B,), 0.
        """
        memory, source_mask = self.encode(source, training=False)
        empty = self._empty_cache(tf.shape(source)[0], length, memory.dtype)
        context = {"memory": [block.memory_cache(memory) for block in self.decoder_blocks], "source_mask": source_mask}
        return [empty for _ in self.decoder_blocks], context, tf.zeros_like(source[:, 0])

    def step(self, token_ids: tf.Tensor, positions: tf.Tensor, cache: list, context: dict) -> tuple[tf.Tensor, list]:
        """One decoding step: (N,) ids at `positions` (N,) -> (N, V) logits of the next token and the updated
        caches."""
        x = self.embedding(token_ids[:, None], training=False, start=positions)  # (N, 1, C)
        updated = []
        for block, layer_cache, memory_cache in zip(self.decoder_blocks, cache, context["memory"]):
            x, layer_cache, _ = block.step(x, positions, layer_cache, memory_cache, context["source_mask"])
            updated.append(layer_cache)
        if self.decoder_norm is not None:
            x = self.decoder_norm(x)
        return self.logits(x)[:, 0], updated


@tf.keras.saving.register_keras_serializable(package="scratch")
class DecoderOnly(TranslationModel):
    """One causal sequence (source, start id, target) (B, T) -> next-token logits (B, T, V)."""

    def __init__(self, config: TranslationConfig | dict, **kwargs):
        super().__init__(config, **kwargs)
        self.blocks = self._blocks(CausalSelfAttentionBlock, "decoder")
        self.final_norm = self._final_norm("final_norm")

    def dummy_inputs(self):
        return tf.ones([1, 2], tf.int32)

    def call(self, sequence, training=None):
        mask = tf.not_equal(sequence, 0)  # (B, T)
        x = self.embedding(sequence, training=training)  # (B, T, C)
        for block in self.blocks:
            x = block(x, padding_mask=mask, training=training)
        if self.final_norm is not None:
            x = self.final_norm(x)
        return self.logits(x)  # (B, T, V)

    def start_decoding(self, source: tf.Tensor, length: tf.Tensor) -> tuple[list, dict, tf.Tensor]:
        """What decoding `source` (B, Ts) for up to `length` output tokens starts from: the source run through
        the blocks in one pass, which fills the key/value caches, one pair of (B, H, Ts + length, D) per block.

        A row's output starts after its source, with the start id at its source length. The slots of a shorter
        row's padding are written too, but each is overwritten by that row's own token before any query sees it.

        Returns:
            The caches, an empty context, and each row's first output position (B,): its source length.
        """
        lengths = tf.reduce_sum(tf.cast(tf.not_equal(source, PAD_ID), tf.int32), axis=1)  # (B,)
        x = self.embedding(source, training=False)  # (B, Ts, C)
        empty = self._empty_cache(tf.shape(source)[0], tf.shape(source)[1] + length, x.dtype)
        cache = []
        for block in self.blocks:
            x, layer_cache = block.step(x, 0, empty)  # causal: a real position never sees the padding after it
            cache.append(layer_cache)
        return cache, {}, lengths

    def step(self, token_ids: tf.Tensor, positions: tf.Tensor, cache: list, context: dict) -> tuple[tf.Tensor, list]:
        """One position per row: (N,) ids at `positions` (N,) -> (N, V) logits of the next token and the updated
        caches."""
        x = self.embedding(token_ids[:, None], training=False, start=positions)  # (N, 1, C)
        updated = []
        for block, layer_cache in zip(self.blocks, cache):
            x, layer_cache = block.step(x, positions, layer_cache)
            updated.append(layer_cache)
        if self.final_norm is not None:
            x = self.final_norm(x)
        return self.logits(x)[:, 0], updated


def build_model(config: TranslationConfig, label_smoothing: float = 0.0) -> TranslationModel:
    """The model of `config.arch` training with `label_smoothing`, built on a dummy batch so that its weights exist."""
    model_class = EncoderDecoder if config.arch == "encoder-decoder" else DecoderOnly
    model = model_class(config, label_smoothing=label_smoothing, name=config.arch.replace("-", "_"))
    model(model.dummy_inputs())
    return model
