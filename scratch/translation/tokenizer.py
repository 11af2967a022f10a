"""One joint, cased, exactly reversible subword vocabulary for both languages (SentencePiece).

Identity normalisation, whitespace kept as written and byte fallback for characters the vocabulary lacks,
so `detokenize(tokenize(s)) == s` for every string without U+2581 (SentencePiece's word-boundary mark, which
detokenizes as a space wherever it stands). SentencePiece's own dummy prefix would lose a text's
leading spaces, so the tokenizer adds one space itself and removes exactly that one when detokenizing: every
word then starts with the word-boundary mark, the first included. Trained in Python on the train split,
applied inside the graph by `tensorflow_text.SentencepieceTokenizer`, so a saved model takes raw strings.
"""

from __future__ import annotations

import io
import logging
import re

import sentencepiece as spm
import tensorflow as tf
import tensorflow_text as tf_text

from core.console import native_notices_silenced
from core.errors import UserError
from scratch.translation.config import BYTE_PIECES, MIN_VOCAB_SIZE, RESERVED

logger = logging.getLogger(__name__)

PAD_ID, UNK_ID, BOS_ID, EOS_ID = 0, 1, 2, 3
PREFIX = " "


class VocabularyError(UserError):
    """A vocabulary size the training text cannot support, with the size to use instead (`suggested`)."""

    def __init__(self, message: str, suggested: int | None = None):
        super().__init__(message)
        self.suggested = suggested


def train_sentencepiece(texts: list[str], vocab_size: int, grow: bool = False) -> bytes:
    """A serialised unigram SentencePiece model of at most `vocab_size` pieces, reserved ids included.

    Args:
        texts: the training sentences of both languages.
        vocab_size: the most pieces; smaller when the text has fewer distinct pieces to offer.
        grow: when the text has more distinct characters than `vocab_size` can hold, use the size that
            holds them instead of failing (for a preset's size; a size the user gave fails with advice).
    """
    try:
        return _train_sentencepiece(texts, vocab_size)
    except VocabularyError as error:
        if not grow or error.suggested is None:
            raise
        logger.warning(
            "%d pieces cannot hold the train split's distinct characters; training %d instead.",
            vocab_size,
            error.suggested,
        )
        return _train_sentencepiece(texts, error.suggested)


def _train_sentencepiece(texts: list[str], vocab_size: int) -> bytes:
    if vocab_size < MIN_VOCAB_SIZE:
        raise VocabularyError(
            f"--vocab-size {vocab_size} is smaller than the {RESERVED} reserved ids (pad, unknown, start, end) "
            f"plus {BYTE_PIECES} byte pieces; use at least {MIN_VOCAB_SIZE}."
        )
    model = io.BytesIO()
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=(PREFIX + text for text in texts),
            model_writer=model,
            vocab_size=vocab_size,
            model_type="unigram",
            normalization_rule_name="identity",
            add_dummy_prefix=False,
            remove_extra_whitespaces=False,
            byte_fallback=True,
            character_coverage=1.0,
            split_digits=True,
            hard_vocab_limit=False,
            pad_id=PAD_ID,
            unk_id=UNK_ID,
            bos_id=BOS_ID,
            eos_id=EOS_ID,
            minloglevel=2,
        )
    except RuntimeError as error:
        needed = re.search(r"required_chars\. \d+ vs (\d+)", str(error))
        suggested = int(needed.group(1)) + 64 if needed else None
        advice = f"pass --vocab-size {suggested} or more" if suggested else "pass a larger --vocab-size"
        raise VocabularyError(
            f"SentencePiece could not build a {vocab_size}-piece vocabulary from the train split ({error}); {advice}.",
            suggested,
        ) from None
    return model.getvalue()


class SubwordTokenizer(tf.Module):
    """Strings to ragged piece ids and back, in the graph.

    Args:
        model_proto: a serialised SentencePiece model from `train_sentencepiece`.
    """

    def __init__(self, model_proto: bytes, name: str | None = None):
        super().__init__(name=name)
        self.model_proto = model_proto
        with native_notices_silenced():  # the model loads here, logging "precompiled_charsmap is empty" at INFO
            self.sentencepiece = tf_text.SentencepieceTokenizer(model_proto, add_bos=False, add_eos=False)
        self.vocab_size = int(self.sentencepiece.vocab_size())

    def tokenize(self, texts: tf.Tensor) -> tf.RaggedTensor:
        """(B,) strings -> (B, None) int32 piece ids, without start or end ids."""
        texts = tf.strings.join([tf.fill(tf.shape(texts), PREFIX), texts])
        return tf.cast(self.sentencepiece.tokenize(texts), tf.int32)

    def detokenize(self, ids: tf.Tensor) -> tf.Tensor:
        """(B, T) ids -> (B,) strings, reading each row up to its first end id and skipping padding."""
        ids = tf.convert_to_tensor(ids, tf.int32)
        before_end = tf.equal(tf.cumsum(tf.cast(tf.equal(ids, EOS_ID), tf.int32), axis=1), 0)  # (B, T)
        keep = tf.logical_and(before_end, ids >= RESERVED)
        texts = self.sentencepiece.detokenize(tf.ragged.boolean_mask(ids, keep))
        return tf.strings.regex_replace(texts, "^" + PREFIX, "", replace_global=False)

    def pieces(self, ids: tf.Tensor) -> tf.Tensor:
        """The piece string of each id, same shape."""
        return self.sentencepiece.id_to_string(ids)


def encode_source(tokenizer: SubwordTokenizer, texts: tf.Tensor, max_length: int) -> tf.Tensor:
    """(B,) strings -> (B, T) source ids: pieces cut to `max_length - 1`, then the end id, padded with 0."""
    pieces = tokenizer.tokenize(texts)[:, : max_length - 1]
    ends = tf.fill([pieces.nrows(), 1], EOS_ID)
    return tf.concat([pieces, tf.RaggedTensor.from_tensor(ends)], axis=1).to_tensor(PAD_ID)
