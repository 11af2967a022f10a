"""The exported translator: a `tf.Module` that takes and returns strings, saved as the run's `saved_model/`.

Load it with `import tensorflow_text` then `tf.saved_model.load(RUN/saved_model)`; no project code is needed.
Its functions (see docs/formats.md):
- `translate(texts)`: (B,) tf.string -> (B,) tf.string, greedy with the key/value cache (also `serving_default`);
- `translate_beam(texts, beam)`: the same by beam search of width `beam` (encoder-decoder only);
- `attention(text)`: one sentence's `source_tokens` (Ts,), `target_tokens` (Tt,) and cross-attention
  `weights` (layers, heads, Tt, Ts) (encoder-decoder only).
"""

from __future__ import annotations

from pathlib import Path

import tensorflow as tf

from core.export import Untracked
from core.rundir import SAVED_MODEL_DIR
from core.runtime import STRINGS
from scratch.translation import decoding
from scratch.translation.model import TranslationModel
from scratch.translation.tokenizer import PAD_ID, SubwordTokenizer, encode_source


class TranslationModule(tf.Module):
    """Tokeniser, model and decoding in one graph.

    Args:
        model: a trained `EncoderDecoder` or `DecoderOnly`.
        model_proto: the serialised SentencePiece model the model was trained with.
        max_length: source tokens kept and most output tokens.
        length_penalty: GNMT exponent of `translate_beam`.
    """

    def __init__(
        self,
        model: TranslationModel,
        model_proto: bytes,
        max_length: int,
        length_penalty: float = decoding.DEFAULT_LENGTH_PENALTY,
    ):
        super().__init__(name="translator")
        # The functions below capture the model's variables; tracking the Keras model itself would also
        # save a trace of every layer's call, which nothing here needs and which triples the export time.
        self._untracked = Untracked(model)
        self.weights = list(model.weights)
        self.tokenizer = SubwordTokenizer(model_proto)
        self.max_length = max_length
        self.length_penalty = length_penalty
        self.arch = model.config.arch

    @property
    def model(self) -> TranslationModel:
        return self._untracked.model

    def encode(self, texts: tf.Tensor) -> tf.Tensor:
        return encode_source(self.tokenizer, texts, self.max_length)

    def decode_ids(self, source: tf.Tensor) -> tf.Tensor:
        if self.arch == "decoder-only":
            return decoding.decoder_only_greedy(self.model, source, self.max_length)
        return decoding.greedy_decode(self.model, source, self.max_length)

    @tf.function(input_signature=[STRINGS])
    def translate(self, texts: tf.Tensor) -> tf.Tensor:
        return self.tokenizer.detokenize(self.decode_ids(self.encode(texts)))

    @tf.function(input_signature=[STRINGS, tf.TensorSpec([], tf.int32)])
    def translate_beam(self, texts: tf.Tensor, beam: tf.Tensor) -> tf.Tensor:
        tf.debugging.assert_positive(beam, message="beam must be at least 1")
        source = self.encode(texts)
        if self.arch == "decoder-only":
            tf.debugging.assert_equal(beam, 1, message="beam search needs the encoder-decoder architecture")
            return self.tokenizer.detokenize(self.decode_ids(source))
        return self.tokenizer.detokenize(
            decoding.beam_search(self.model, source, self.max_length, beam, self.length_penalty)
        )

    @tf.function(input_signature=[tf.TensorSpec([], tf.string)])
    def attention(self, text: tf.Tensor) -> dict[str, tf.Tensor]:
        source = self.encode(text[None])  # (1, Ts)
        output = self.decode_ids(source)  # (1, T)
        real = tf.reduce_sum(tf.cast(tf.not_equal(output, PAD_ID), tf.int32))
        output = output[:, :real]  # the tokens up to and including the end id
        pieces = lambda ids: self.tokenizer.pieces(ids[0])  # noqa: E731
        if self.arch == "decoder-only":
            weights = tf.zeros([0, 0, real, tf.shape(source)[1]])
        else:
            weights = decoding.cross_attention(self.model, source, output)
        return {"source_tokens": pieces(source), "target_tokens": pieces(output), "weights": weights}


def save(module: TranslationModule, run_dir: Path) -> Path:
    """Writes `run_dir/saved_model/` with `translate` as its serving signature."""
    path = Path(run_dir) / SAVED_MODEL_DIR
    tf.saved_model.save(module, str(path), signatures={"serving_default": module.translate})
    return path
