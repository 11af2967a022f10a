"""The exported translator: a `tf.Module` that takes and returns strings, saved as the run's `saved_model/`.

Load it with `import tensorflow_text` then `tf.saved_model.load(RUN/saved_model)`; no project code is needed.
Its functions (see docs/formats.md):
- `translate(texts)`: (B,) tf.string -> (B,) tf.string, greedy with the key/value cache (also `serving_default`);
- `translate_beam(texts, beam)`: the same by beam search of width `beam` (encoder-decoder only);
- `translate_nbest(texts, beam)`: beam search's `beam` best translations of each text, `translations` (B, beam)
  tf.string, best first, and their length-penalised log-probabilities `scores` (B, beam) float32, -inf where a
  slot holds none (encoder-decoder only): what minimum-Bayes-risk selection chooses among;
- `attention(text)`: one sentence's `source_tokens` (Ts,), `target_tokens` (Tt,) and cross-attention
  `weights` (layers, heads, Tt, Ts) (encoder-decoder only).
- `greedy_ids(source)` and `beam_search(texts, beam)`: the two decoding loops the others call.
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

SOURCE_IDS = tf.TensorSpec([None, None], tf.int32)  # (B, Ts) source piece ids, padded with 0


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

    # The decoding loops are traced once each, here, and called by the functions below: saving traces every
    # function again, and a loop traced once is the larger part of the export's time.
    @tf.function(input_signature=[SOURCE_IDS])
    def greedy_ids(self, source: tf.Tensor) -> tf.Tensor:
        """Greedy output ids (B, T) of source ids (B, Ts)."""
        return decoding.decode(self.model, source, self.max_length, decoding.Greedy()).best

    @tf.function(input_signature=[STRINGS, tf.TensorSpec([], tf.int32)])
    def beam_search(self, texts: tf.Tensor, beam: tf.Tensor) -> decoding.Hypotheses:
        tf.debugging.assert_positive(beam, message="beam must be at least 1")
        if self.arch == "decoder-only":
            tf.debugging.assert_equal(beam, 1, message="beam search needs the encoder-decoder architecture")
        search = decoding.BeamSearch(beam, self.length_penalty)
        return decoding.decode(self.model, self.encode(texts), self.max_length, search)

    @tf.function(input_signature=[STRINGS])
    def translate(self, texts: tf.Tensor) -> tf.Tensor:
        return self.tokenizer.detokenize(self.greedy_ids(self.encode(texts)))

    @tf.function(input_signature=[STRINGS, tf.TensorSpec([], tf.int32)])
    def translate_beam(self, texts: tf.Tensor, beam: tf.Tensor) -> tf.Tensor:
        return self.tokenizer.detokenize(self.beam_search(texts, beam).best)

    @tf.function(input_signature=[STRINGS, tf.TensorSpec([], tf.int32)])
    def translate_nbest(self, texts: tf.Tensor, beam: tf.Tensor) -> dict[str, tf.Tensor]:
        found = self.beam_search(texts, beam)
        shape = tf.shape(found.ids)  # (B, K, T)
        texts = self.tokenizer.detokenize(tf.reshape(found.ids, [shape[0] * shape[1], shape[2]]))  # (B*K,)
        return {"translations": tf.reshape(texts, shape[:2]), "scores": found.scores}

    @tf.function(input_signature=[tf.TensorSpec([], tf.string)])
    def attention(self, text: tf.Tensor) -> dict[str, tf.Tensor]:
        source = self.encode(text[None])  # (1, Ts)
        output = self.greedy_ids(source)  # (1, T)
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
