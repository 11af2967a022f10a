"""The fine-tuned side's serving module: BERT's tokenizer and the model in one graph, strings in, probabilities (or a
regression run's values) out; a pair task's module takes `text` and `text_pair`, joined as transformers joins them.

`python -m finetune export RUN_DIR --output-dir DIR` (`core.export` writes the files). Tokenisation follows the
run's Hugging Face tokenizer (BertNormalizer, then BERT pre-tokenisation and WordPiece) with tensorflow-text:

- `serve` (the float SavedModel): the normalizer written with TensorFlow string ops, in the tokenizer's order:
  whitespace to spaces, control characters dropped, NFD then combining marks dropped (accent stripping),
  lower-casing character by character (so a final sigma stays σ), then `FastBertTokenizer` without its own
  normalisation. It gives the transformers tokenizer's ids, [CLS] and [SEP] around at most `max_length - 2`
  pieces, as `finetune.pipeline.encode` cuts them; for a pair, `[CLS] text [SEP] text_pair [SEP]` with its segment
  ids, cut the tokenizer's `longest_first` way (`add_pair_special_tokens`).
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
from core.kinds import Kind
from core.long_text import HEAD, Reading, head_tail
from core.record import RunRecord
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


def add_special_tokens(
    pieces: tf.RaggedTensor, max_length: int, cls_id: int, sep_id: int, pad_id: int, long_text: str = HEAD
):
    """(B, None) piece ids -> [CLS] + the pieces the run reads within `max_length - 2` + [SEP], padded: ids and mask
    (B, T). A longer text keeps its head, or under any other reading its head and tail (`core.long_text.head_tail`,
    as `finetune.pipeline.encode` cuts it; a reading in chunks is served as its head-tail cut).

    Written with dense ops only, so that TFLite runs it without TensorFlow's ragged kernels.
    """
    budget = max_length - 2
    dense = pieces.to_tensor(default_value=pad_id)  # (B, L)
    full = tf.cast(pieces.row_lengths(), tf.int32)[:, None]  # (B, 1)
    positions = tf.range(budget)[None, :]  # (1, W)
    if long_text == HEAD:
        source = positions
    else:
        head, tail = head_tail(budget + 1, budget, max_length)  # the same split for every longer text
        source = tf.where((full > budget) & (positions >= head), positions - head + full - tail, positions)
    width = tf.shape(dense)[1]
    source = tf.minimum(tf.broadcast_to(source, [tf.shape(dense)[0], budget]), tf.maximum(width - 1, 0))
    body = tf.gather(tf.pad(dense, [[0, 0], [0, 1]], constant_values=pad_id), source, batch_dims=1)  # (B, W)
    body = body[:, : tf.minimum(width, budget)]
    lengths = tf.minimum(full[:, 0], budget)  # (B,)
    batch = tf.shape(body)[0]
    ids = tf.concat([tf.fill([batch, 1], cls_id), body, tf.fill([batch, 1], pad_id)], axis=1)  # (B, W + 2)
    positions = tf.range(tf.shape(ids)[1])[None, :]  # (1, T)
    ends = lengths[:, None] + 1  # (B, 1): where [SEP] goes
    ids = tf.where(positions == ends, sep_id, tf.where(positions > ends, pad_id, ids))
    return ids, tf.cast(positions <= ends, tf.int32)


def longest_first(first: tf.Tensor, second: tf.Tensor, budget: int) -> tuple[tf.Tensor, tf.Tensor]:
    """How many pieces of each text of a pair (lengths (B,) each) the tokenizers library's `longest_first` truncation
    keeps within `budget` pieces: none are cut when both fit; else the shorter is kept whole and the longer cut to
    the rest when the shorter takes at most half; else each gets half (the longer, or on a tie the second, the odd
    piece)."""
    short, long = tf.minimum(first, second), tf.maximum(first, second)
    fits, halves = short + long <= budget, 2 * short > budget
    short_keep = tf.where(fits | ~halves, short, budget // 2)
    long_keep = tf.where(fits, long, tf.where(halves, budget // 2 + budget % 2, budget - short))
    first_longer = first > second
    return tf.where(first_longer, long_keep, short_keep), tf.where(first_longer, short_keep, long_keep)


def add_pair_special_tokens(
    first: tf.RaggedTensor, second: tf.RaggedTensor, max_length: int, cls_id: int, sep_id: int, pad_id: int
) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """Piece ids (B, None) of each text of a pair -> `[CLS] first [SEP] second [SEP]` cut to `max_length` tokens
    (`longest_first`), padded: ids, segment ids (1 from the second text on) and mask, (B, T) each.

    Written with dense ops only, so that TFLite runs it without TensorFlow's ragged kernels.
    """
    batch = tf.shape(first.row_lengths())[0]
    column = tf.fill([batch, 1], pad_id)  # so that a batch of empty texts still has a column to gather from
    a = tf.concat([first.to_tensor(default_value=pad_id), column], axis=1)  # (B, Wa + 1)
    b = tf.concat([second.to_tensor(default_value=pad_id), column], axis=1)  # (B, Wb + 1)
    lengths = [tf.cast(text.row_lengths(), tf.int32) for text in (first, second)]
    a_keep, b_keep = longest_first(*lengths, max_length - 3)  # (B,) each
    a_end = a_keep[:, None] + 1  # (B, 1): where the first [SEP] goes
    b_end = a_end + b_keep[:, None] + 1  # (B, 1): the second [SEP]
    positions = tf.range(tf.reduce_max(b_end) + 1)[None, :]  # (1, T)
    a_index = tf.clip_by_value(positions - 1 + 0 * a_end, 0, tf.shape(a)[1] - 1)  # (B, T)
    b_index = tf.clip_by_value(positions - a_end - 1, 0, tf.shape(b)[1] - 1)  # (B, T)
    from_a, from_b = tf.gather(a, a_index, batch_dims=1), tf.gather(b, b_index, batch_dims=1)  # (B, T) each
    body = tf.where(positions < a_end, from_a, tf.where(positions == a_end, sep_id, from_b))
    ids = tf.where(
        positions == 0, cls_id, tf.where(positions < b_end, body, tf.where(positions == b_end, sep_id, pad_id))
    )
    types = tf.cast((positions > a_end) & (positions <= b_end), tf.int32)
    return ids, types, tf.cast(positions <= b_end, tf.int32)


class WordPieceIds(tf.Module):
    """A Hugging Face WordPiece tokenizer in the graph: (B,) strings -> ids and attention mask (B, T), int32.

    Args:
        tokenizer: the run's Hugging Face fast tokenizer (a WordPiece one).
        max_length: texts are cut to this many tokens, special tokens included.
        long_text: how a longer text is cut (`core.long_text`): its head, else its head and tail.
    """

    def __init__(self, tokenizer, max_length: int, long_text: str = HEAD):
        super().__init__(name="wordpiece_ids")
        import tensorflow_text as tf_text

        check_wordpiece(tokenizer)
        vocab = sorted(tokenizer.get_vocab().items(), key=lambda item: item[1])
        if [i for _, i in vocab] != list(range(len(vocab))):
            raise UserError("The run's tokenizer vocabulary has gaps in its ids; it cannot be exported.")
        vocabulary = [token for token, _ in vocab]
        self.max_length, self.long_text = max_length, long_text
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
        return add_special_tokens(pieces, self.max_length, *self.special, self.long_text)

    def lite(self, texts: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """The same with FastBertTokenizer's own normalizer, in ops TFLite runs."""
        return add_special_tokens(self.pieces_lite.tokenize(texts), self.max_length, *self.special, self.long_text)

    def pairs(self, texts: tf.Tensor, text_pairs: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        """The transformers tokenizer's ids, segment ids and attention mask of `(text, text_pair)`, (B, T) each."""
        first, second = (
            self.pieces.tokenize(normalize(x, self.lowercase, self.strip_accents)) for x in (texts, text_pairs)
        )
        return add_pair_special_tokens(first, second, self.max_length, *self.special)

    def pairs_lite(self, texts: tf.Tensor, text_pairs: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        """The same with FastBertTokenizer's own normalizer, in ops TFLite runs."""
        first, second = (self.pieces_lite.tokenize(x) for x in (texts, text_pairs))
        return add_pair_special_tokens(first, second, self.max_length, *self.special)


class FinetunedServing(tf.Module):
    """Strings (B,) -> `{"probabilities": (B, K)}`, or `{"values": (B,)}` for regression, for a fine-tuned BERT and
    its WordPiece tokenizer; a pair task's `serve(text, text_pair)` takes the second texts too.

    Args:
        model: the transformers TF sequence-classification model.
        tokenizer: its Hugging Face fast tokenizer (a WordPiece one).
        max_length: texts are cut to this many tokens, special tokens included.
        run_dir: the finished run the model was loaded from (its `model.onnx`, or its saved model to convert).
        kind: the run's kind of task (`core.kinds`).
        has_pairs: whether the run reads text pairs.
        temperatures: the run's calibration (run.json `calibration`), baked into every output; None: T = 1.
        long_text: how the run cuts a longer text (`core.long_text`).
    """

    def __init__(
        self,
        model: tf.keras.Model,
        tokenizer,
        max_length: int,
        run_dir: Path,
        kind: Kind,
        has_pairs: bool,
        temperatures: list[float] | None = None,
        long_text: str = HEAD,
    ):
        super().__init__(name="finetuned_classifier")
        self._untracked = Untracked(model)
        self._untracked.tokenizer = tokenizer
        self._untracked.run_dir = run_dir
        self._untracked.kind, self._untracked.has_pairs = kind, has_pairs
        self._untracked.temperatures = temperatures
        self.weights = list(model.weights)  # what the functions capture; the Keras model itself is not traced
        self.token_ids = WordPieceIds(tokenizer, max_length, long_text)
        self.tokenizer_note = self.token_ids.note
        self.output = kind.outputs
        if has_pairs:
            pair = [tf.TensorSpec([None], tf.string, name="text"), tf.TensorSpec([None], tf.string, name="text_pair")]
            self.serve = tf.function(self._serve_pair, input_signature=pair)
            self.serve_lite = tf.function(self._serve_pair_lite, input_signature=pair)
        else:
            self.serve = tf.function(self._serve, input_signature=[STRINGS])
            self.serve_lite = tf.function(self._serve_lite, input_signature=[STRINGS])

    @property
    def model(self) -> tf.keras.Model:
        return self._untracked.model

    def _outputs(self, ids: tf.Tensor, mask: tf.Tensor, types: tf.Tensor | None = None) -> dict[str, tf.Tensor]:
        segments = {} if types is None else {"token_type_ids": types}
        logits = self.model(input_ids=ids, attention_mask=mask, **segments, training=False).logits  # (B, K)
        kind, temperatures = self._untracked.kind, self._untracked.temperatures
        return {self.output: kind.calibration.apply_tensor(kind.activate(logits), temperatures)}  # (B, K) or (B,)

    def _serve(self, text: tf.Tensor) -> dict[str, tf.Tensor]:
        return self._outputs(*self.token_ids(text))

    def _serve_lite(self, text: tf.Tensor) -> dict[str, tf.Tensor]:
        return self._outputs(*self.token_ids.lite(text))

    def _serve_pair(self, text: tf.Tensor, text_pair: tf.Tensor) -> dict[str, tf.Tensor]:
        ids, types, mask = self.token_ids.pairs(text, text_pair)
        return self._outputs(ids, mask, types)

    def _serve_pair_lite(self, text: tf.Tensor, text_pair: tf.Tensor) -> dict[str, tf.Tensor]:
        ids, types, mask = self.token_ids.pairs_lite(text, text_pair)
        return self._outputs(ids, mask, types)

    def write_onnx(self, directory: Path) -> dict[str, Any]:
        """`model.onnx`, `model_int8.onnx` and `tokenizer.json` into `directory`; returns export.json's `onnx`."""
        from core.export import ONNX_FILES, TOKENIZER_FILE
        from core.onnx import ONNX_FILE, QUANTIZATION, quantize
        from finetune.onnx import convert_run_model

        run_dir, tokenizer = Path(self._untracked.run_dir), self._untracked.tokenizer
        float_path = Path(directory) / ONNX_FILES["float"]
        if (run_dir / ONNX_FILE).is_file():
            shutil.copyfile(run_dir / ONNX_FILE, float_path)
        else:  # a run trained with --no-onnx, or whose ONNX model did not reproduce it
            convert_run_model(self.model, run_dir, float_path, self._untracked.has_pairs)
        self._untracked.kind.calibration.apply_onnx(float_path, self._untracked.temperatures)
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


def check_wordpiece(tokenizer) -> None:
    model = getattr(getattr(tokenizer, "backend_tokenizer", None), "model", None)
    if type(model).__name__ != "WordPiece":
        raise UserError(
            f"Only WordPiece (BERT-style) tokenizers can be exported with their tokenisation in the graph; this run's "
            f"tokenizer is {type(tokenizer).__name__}."
        )


def build(run_dir: Path, record: RunRecord) -> FinetunedServing:
    """The serving module of a finished fine-tuned run (what `core.export` saves)."""
    from finetune.predict import load

    classifier = load(run_dir, record)
    return FinetunedServing(
        classifier.model,
        classifier.tokenizer,
        classifier.max_length,
        run_dir,
        record.kind,
        record.has_pairs,
        record.temperatures,
        Reading.of(record.data.options).long_text,
    )


def export_run(args: ExportArguments) -> None:
    """`python -m finetune export RUN_DIR --output-dir DIR [--overwrite] [--no-evaluate]` (`core.export`)."""
    from core.export import export_run as export

    export(args, "finetune", build)
