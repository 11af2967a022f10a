"""The fine-tuned side's serving module: BERT's tokenizer and the classifier in one graph, strings in.

`python -m finetune export RUN_DIR --output-dir DIR` (`core.export` writes the files). Tokenisation follows the
run's Hugging Face tokenizer (BertNormalizer, then BERT pre-tokenisation and WordPiece) with tensorflow-text:

- `serve` (the float SavedModel): the normalizer written with TensorFlow string ops, in the tokenizer's order:
  whitespace to spaces, control characters dropped, NFD then combining marks dropped (accent stripping),
  lower-casing character by character (so a final sigma stays σ), then `FastBertTokenizer` without its own
  normalisation. It gives the transformers tokenizer's ids, [CLS] and [SEP] around at most `max_length - 2`
  pieces, as `finetune.pipeline.encode` cuts them.
- `write_onnx`: the run's `model.onnx` (converted now if the run has none), its int8 quantization and the Hugging Face
  `tokenizer.json`, for ONNX Runtime (`core.onnx`).
- `serve_lite` (the int8 TFLite variant): `FastBertTokenizer`'s own normalizer, the one TFLite can run. It folds
  compatibility characters (ligatures, full-width forms, ß) that the Hugging Face tokenizer keeps, so on text
  holding them the int8 model may see other pieces; everywhere else its ids are the same.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import tensorflow as tf

from core.args import ExportArguments
from core.errors import UserError
from core.export import Untracked
from core.runtime import STRINGS


def normalize(texts: tf.Tensor, lowercase: bool, strip_accents: bool) -> tf.Tensor:
    """What transformers' BertNormalizer does to a (B,) string batch, in its order (Chinese characters aside)."""
    import tensorflow_text as tf_text

    texts = tf.strings.regex_replace(texts, r"[\t\n\r\p{Zs}]", " ")  # whitespace becomes a space
    texts = tf.strings.regex_replace(texts, r"[\x{FFFD}\p{C}]", "")  # control and format characters go
    if strip_accents:
        texts = tf_text.normalize_utf8(texts, "NFD")
        texts = tf.strings.regex_replace(texts, r"\p{Mn}", "")
    if lowercase:
        # tf.strings.lower lowers a word-final Σ to ς; the Hugging Face tokenizer lowers every Σ to σ.
        texts = tf.strings.lower(tf.strings.regex_replace(texts, "Σ", "σ"), encoding="utf-8")
    return texts


def add_special_tokens(pieces: tf.RaggedTensor, max_length: int, cls_id: int, sep_id: int, pad_id: int):
    """(B, None) piece ids -> [CLS] + the first `max_length - 2` pieces + [SEP], padded: ids and mask (B, T).

    Written with dense ops only, so that TFLite runs it without TensorFlow's ragged kernels.
    """
    body = pieces.to_tensor(default_value=pad_id)[:, : max_length - 2]  # (B, W)
    lengths = tf.minimum(tf.cast(pieces.row_lengths(), tf.int32), max_length - 2)  # (B,)
    batch = tf.shape(body)[0]
    ids = tf.concat([tf.fill([batch, 1], cls_id), body, tf.fill([batch, 1], pad_id)], axis=1)  # (B, W + 2)
    positions = tf.range(tf.shape(ids)[1])[None, :]  # (1, T)
    ends = lengths[:, None] + 1  # (B, 1): where [SEP] goes
    ids = tf.where(positions == ends, sep_id, tf.where(positions > ends, pad_id, ids))
    return ids, tf.cast(positions <= ends, tf.int32)


class WordPieceIds(tf.Module):
    """A Hugging Face WordPiece tokenizer in the graph: (B,) strings -> ids and attention mask (B, T), int32.

    Args:
        tokenizer: the run's Hugging Face fast tokenizer (a WordPiece one).
        max_length: texts are cut to this many tokens, special tokens included.
    """

    def __init__(self, tokenizer, max_length: int):
        super().__init__(name="wordpiece_ids")
        import tensorflow_text as tf_text

        check_wordpiece(tokenizer)
        vocab = sorted(tokenizer.get_vocab().items(), key=lambda item: item[1])
        if [i for _, i in vocab] != list(range(len(vocab))):
            raise UserError("The run's tokenizer vocabulary has gaps in its ids; it cannot be exported.")
        vocabulary = [token for token, _ in vocab]
        self.max_length = max_length
        self.lowercase = bool(tokenizer.init_kwargs.get("do_lower_case", True))
        strip = tokenizer.init_kwargs.get("strip_accents")
        self.strip_accents = self.lowercase if strip is None else bool(strip)
        self.special = (tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id)
        common = {"vocab": vocabulary, "token_out_type": tf.int32, "unknown_token": tokenizer.unk_token}
        self.pieces = tf_text.FastBertTokenizer(**common, lower_case_nfd_strip_accents=False)
        self.pieces_lite = tf_text.FastBertTokenizer(
            **common, lower_case_nfd_strip_accents=self.lowercase and self.strip_accents
        )
        self.note = (
            f"WordPiece ({len(vocabulary)} pieces), lower-case {self.lowercase}, strip accents {self.strip_accents}; "
            "int8: tensorflow-text's FastBertNormalize"
        )

    def __call__(self, texts: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """The transformers tokenizer's ids and attention mask, (B, T) each."""
        pieces = self.pieces.tokenize(normalize(texts, self.lowercase, self.strip_accents))  # (B, None)
        return add_special_tokens(pieces, self.max_length, *self.special)

    def lite(self, texts: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """The same with FastBertTokenizer's own normalizer, in ops TFLite runs."""
        return add_special_tokens(self.pieces_lite.tokenize(texts), self.max_length, *self.special)


class FinetunedServing(tf.Module):
    """Strings (B,) -> `{"probabilities": (B, K)}` for a fine-tuned BERT classifier and its WordPiece tokenizer.

    Args:
        model: the transformers TF sequence-classification model.
        tokenizer: its Hugging Face fast tokenizer (a WordPiece one).
        max_length: texts are cut to this many tokens, special tokens included.
        run_dir: the finished run the model was loaded from (its `model.onnx`, or its saved model to convert).
    """

    def __init__(self, model: tf.keras.Model, tokenizer, max_length: int, run_dir: Path):
        super().__init__(name="finetuned_classifier")
        self._untracked = Untracked(model)
        self._untracked.tokenizer = tokenizer
        self._untracked.run_dir = run_dir
        self.weights = list(model.weights)  # what the functions capture; the Keras model itself is not traced
        self.token_ids = WordPieceIds(tokenizer, max_length)
        self.tokenizer_note = self.token_ids.note

    @property
    def model(self) -> tf.keras.Model:
        return self._untracked.model

    def _probabilities(self, ids: tf.Tensor, mask: tf.Tensor) -> tf.Tensor:
        logits = self.model(input_ids=ids, attention_mask=mask, training=False).logits  # (B, K)
        return tf.nn.softmax(tf.cast(logits, tf.float32), axis=-1)

    def write_onnx(self, directory: Path) -> dict[str, Any]:
        """`model.onnx`, `model_int8.onnx` and `tokenizer.json` into `directory`; returns export.json's `onnx`."""
        from core.export import ONNX_FILES, TOKENIZER_FILE
        from core.onnx import ONNX_FILE, QUANTIZATION, quantize
        from finetune.onnx import convert_saved

        run_dir, tokenizer = Path(self._untracked.run_dir), self._untracked.tokenizer
        float_path = Path(directory) / ONNX_FILES["float"]
        if (run_dir / ONNX_FILE).is_file():
            shutil.copyfile(run_dir / ONNX_FILE, float_path)
        else:  # a run trained with --no-onnx, or whose ONNX model did not reproduce it
            convert_saved(run_dir, float_path)
        quantize(float_path, Path(directory) / ONNX_FILES["int8"])
        tokenizer.backend_tokenizer.save(str(Path(directory) / TOKENIZER_FILE))
        return {
            **{
                variant: {"path": name, "bytes": (Path(directory) / name).stat().st_size}
                for variant, name in ONNX_FILES.items()
            },
            "tokenizer": TOKENIZER_FILE,
            "pad_id": tokenizer.pad_token_id,
            "quantization": QUANTIZATION,
        }

    @tf.function(input_signature=[STRINGS])
    def serve(self, text: tf.Tensor) -> dict[str, tf.Tensor]:
        return {"probabilities": self._probabilities(*self.token_ids(text))}

    @tf.function(input_signature=[STRINGS])
    def serve_lite(self, text: tf.Tensor) -> dict[str, tf.Tensor]:
        return {"probabilities": self._probabilities(*self.token_ids.lite(text))}


def check_wordpiece(tokenizer) -> None:
    model = getattr(getattr(tokenizer, "backend_tokenizer", None), "model", None)
    if type(model).__name__ != "WordPiece":
        raise UserError(
            f"Only WordPiece (BERT-style) tokenizers can be exported with their tokenisation in the graph; this run's "
            f"tokenizer is {type(tokenizer).__name__}."
        )


def build(run_dir: Path, run: dict[str, Any]) -> FinetunedServing:
    """The serving module of a finished fine-tuned run (what `core.export` saves)."""
    from finetune.predict import load

    classifier = load(run_dir, run)
    return FinetunedServing(classifier.model, classifier.tokenizer, classifier.max_length, run_dir)


def export_run(args: ExportArguments) -> None:
    """`python -m finetune export RUN_DIR --output-dir DIR [--overwrite] [--no-evaluate]` (`core.export`)."""
    from core.export import export_run as export

    export(args, "finetune", build)
