"""Serving exports (`python -m <side> export RUN_DIR --output-dir DIR`): raw strings in, probabilities (or a
regression run's values) out.

Each side builds a `tf.Module` whose `serve(text)` maps a `tf.string` batch (B,) to `{"probabilities": (B, K)}`
(`{"values": (B,)}` for regression; a pair task's `serve(text, text_pair)` takes a second batch of strings)
with its tokenizer inside the graph; a side whose tokenizer TFLite can run also gives `serve_lite`, the same
computation written with TFLite-convertible ops, which becomes the int8 variant (dynamic-range quantization:
int8 weights, activations quantized on the fly). This module writes, into `DIR.partial/` renamed to `DIR` when
complete (docs/formats.md, "Serving export"):

- `saved_model/`: the float SavedModel, signature `serving_default` (input `text`, and `text_pair` for a pair task;
  output `probabilities`, or `values`);
- `model_int8.tflite`: the int8 variant, signature `serving_default` with the same names;
- `model.onnx`, `model_int8.onnx`, `tokenizer.json`: (fine-tuned side) the same classifier for ONNX Runtime, float and
  int8 (dynamic quantization), taking token ids from the Hugging Face tokenizer in `tokenizer.json`;
- `labels.txt`: the class names in probability-column order (none for regression);
- `export.json`: what was exported (with the kind of problem, the inputs, the output and a multi-label run's
  thresholds) and every variant's test-split headline score.

Reading the TensorFlow files needs TensorFlow and tensorflow-text only, the ONNX ones onnxruntime and tokenizers
only: `load_float`, `load_int8` and `load_onnx` are what a user writes.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core import kinds
from core.args import DataArguments, ExportArguments
from core.classifier import predict_in_batches
from core.console import native_notices_silenced
from core.long_text import HEAD, Reading
from core.record import RunRecord, read_run
from core.rundir import (
    RESUME_FILE,
    SAVED_MODEL_DIR,
    RunError,
    environment,
    package_version,
    partial_path,
    replace_dir,
    write_json,
)
from core.translator import is_translation_run

logger = logging.getLogger(__name__)

EXPORT_JSON = "export.json"
INT8_FILE = "model_int8.tflite"
LABELS_FILE = "labels.txt"
ONNX_FILES = {"float": "model.onnx", "int8": "model_int8.onnx"}
TOKENIZER_FILE = "tokenizer.json"
SCHEMA_VERSION = 1
EVAL_BATCH = 64

Predict = Callable[
    ..., np.ndarray
]  # texts (and for a pair task their text pairs) -> probabilities (n, K) or values (n,)


@dataclass
class TestSplit:
    """What an export is scored on: the run's test texts, their second texts (pair tasks) and their targets."""

    texts: list[str]
    text_pairs: list[str] | None
    targets: np.ndarray


class Untracked:
    """A plain holder that `tf.Module` attribute tracking does not look into: a serving module keeps its Keras
    model here, so that only the traced functions, not the model's Python-side state, are saved."""

    def __init__(self, model: Any):
        self.model = model


def export_run(args: ExportArguments, side: str, build: Callable[[Path, RunRecord], Any]) -> None:
    """`python -m <side> export RUN_DIR --output-dir DIR`: builds the side's module with `build(run_dir, record)` and
    exports it. A bad run or output directory, or a missing data file, is refused before the model loads."""
    record = read_export_run(args.run_dir, side)
    check_output_dir(args)  # before the model loads
    test = read_test_split(record) if args.evaluate else None  # a missing data file, before the slow conversions
    export(args, record, build(Path(args.run_dir), record), test)


def read_export_run(run_dir: str | Path, side: str) -> RunRecord:
    """The run's validated record, refusing a translation run and a run of the other side."""
    if is_translation_run(run_dir):
        raise RunError(f"{run_dir} is a translation run; its saved_model/ is already its serving export.")
    record = read_run(run_dir)
    if record.side != side:
        raise RunError(f"{run_dir} is a {record.side} run; export it with python -m {record.side} export.")
    return record


def check_output_dir(args: ExportArguments) -> Path:
    """`--output-dir`, once it is known that writing there replaces at most an earlier export."""
    output_dir = Path(args.output_dir)
    if output_dir.resolve() in (Path(args.run_dir).resolve(), *Path(args.run_dir).resolve().parents):
        raise RunError(f"--output-dir {output_dir} holds the run {args.run_dir}; choose a directory outside it.")
    if output_dir.is_symlink():
        raise RunError(f"--output-dir {output_dir} is a symbolic link; give the directory it points to.")
    if (partial_path(output_dir) / RESUME_FILE).is_file():
        raise RunError(f"{partial_path(output_dir)} is an unfinished training run; choose another --output-dir.")
    if not output_dir.exists():
        return output_dir
    if not args.overwrite:
        raise RunError(f"{output_dir} already exists. Pass --overwrite to replace it, or choose another --output-dir.")
    if not output_dir.is_dir() or (any(output_dir.iterdir()) and not (output_dir / EXPORT_JSON).is_file()):
        raise RunError(
            f"{output_dir} is not an export (it has no {EXPORT_JSON}): --overwrite replaces only an earlier export "
            "or an empty directory. Choose another --output-dir."
        )
    return output_dir


def read_test_split(record: RunRecord) -> TestSplit:
    """The run's test split, read from the data options it recorded."""
    from core.data import DataError, load_task

    data_log = logging.getLogger("core.data")
    level = data_log.level
    data_log.setLevel(logging.ERROR)  # how the splits were carved was said when the run trained
    try:
        task = load_task(DataArguments(**record.data.options))
    except DataError as error:
        raise RunError(
            f"{error} The export is scored on the run's test split; pass --no-evaluate to skip it."
        ) from None
    finally:
        data_log.setLevel(level)
    return TestSplit(task.texts("test"), task.text_pairs("test"), task.targets("test"))


def export(args: ExportArguments, run: RunRecord, module: Any, test: TestSplit | None = None) -> Path:
    """Writes the export of `module` (a side's serving module) for the run `run` into `args.output_dir`; returns it.

    `test` is scored when given. Nothing is left in `DIR.partial/` when this fails.
    """
    output_dir = check_output_dir(args)
    partial = partial_path(output_dir)
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    try:
        _write(args, run, module, test, partial)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    replace_dir(partial, output_dir)
    logger.info("Export complete: %s", output_dir)
    return output_dir


def _write(args: ExportArguments, run: RunRecord, module: Any, test: TestSplit | None, partial: Path) -> None:
    import tensorflow as tf

    logger.info("Saving the float SavedModel to %s", partial / SAVED_MODEL_DIR)
    tf.saved_model.save(module, str(partial / SAVED_MODEL_DIR), signatures={"serving_default": module.serve})
    kind, labels = run.kind, run.labels
    if kind.has_labels:
        (partial / LABELS_FILE).write_text("".join(f"{label}\n" for label in labels), encoding="utf-8")
    inputs = ["text", "text_pair"] if run.has_pairs else ["text"]
    int8_note = getattr(module, "int8_note", None)
    if hasattr(module, "serve_lite"):
        logger.info("Converting to TFLite with dynamic-range int8 quantization")
        (partial / INT8_FILE).write_bytes(convert_int8(module))
        try:  # a converted graph can hold ops the interpreter cannot run; find out now, not when it is served
            load_int8(partial)(*[["a"]] * len(inputs))
        except (RuntimeError, ValueError) as error:
            raise RunError(f"The int8 TFLite model converted from {args.run_dir} does not run: {error}") from None
    onnx = module.write_onnx(partial) if hasattr(module, "write_onnx") else None

    manifest: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "side": run.side,
        "run": str(Path(args.run_dir).resolve()),
        "run_created": run.created,
        "problem_type": kind.name,
        "inputs": inputs,
        "output": kind.outputs,
        "labels": labels,
        "thresholds": run.thresholds and list(run.thresholds),
        "calibration": run.calibration and run.calibration.to_json(),  # baked into every variant's outputs
        "max_length": run.data.options["max_length"],
        "long_text": Reading.of(run.data.options).long_text,  # how a longer text is cut (`core.long_text`)
        "tokenizer": getattr(module, "tokenizer_note", ""),
        "float": {"path": SAVED_MODEL_DIR, "bytes": _size(partial / SAVED_MODEL_DIR)},
        "int8": None,
        "onnx": onnx,
    }
    if (partial / INT8_FILE).is_file():
        manifest["int8"] = {
            "path": INT8_FILE,
            "bytes": _size(partial / INT8_FILE),
            "quantization": "dynamic-range (TFLite): int8 weights, activations quantized per call",
        }
    else:
        manifest["int8_note"] = int8_note
    if test is not None:
        manifest["test"] = evaluate_export(partial, manifest, test)
    manifest["environment"] = {**environment(), "tensorflow_text": package_version("tensorflow-text")}
    manifest["created"] = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    write_json(partial / EXPORT_JSON, manifest)


def convert_int8(module: Any) -> bytes:
    """`module.serve_lite` as a TFLite flatbuffer with int8 weights (signature `serving_default`)."""
    import tensorflow as tf

    function = module.serve_lite.get_concrete_function()
    converter = tf.lite.TFLiteConverter.from_concrete_functions([function], module)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]  # without a representative dataset: dynamic range
    converter.allow_custom_ops = True  # the tensorflow-text tokenizer ops, registered by the interpreter
    return converter.convert()


def outputs_of(predict: Predict, texts: list[str], text_pairs: list[str] | None = None) -> np.ndarray:
    """`predict` over `texts` (with `text_pairs`) in batches of similar length, in the order given."""
    if text_pairs is None:
        return predict_in_batches(predict, texts, EVAL_BATCH)
    lengths = [len(text) + len(pair) for text, pair in zip(texts, text_pairs, strict=True)]
    pairs = lambda rows: predict([texts[i] for i in rows], [text_pairs[i] for i in rows])  # noqa: E731
    return predict_in_batches(pairs, list(range(len(texts))), EVAL_BATCH, lengths=lengths)


def evaluate_export(export_dir: Path, manifest: dict[str, Any], test: TestSplit) -> dict[str, Any]:
    """The written files' headline score on the run's test split (`float_<headline>`, `int8_<headline>`, ... with
    `accuracy`, `macro_f1` or `spearman`), its change from float, and for the classification kinds how often a
    quantized variant decides as the float one does."""
    logger.info("Scoring the export on the %d test examples", len(test.texts))
    kind, thresholds = kinds.get(manifest["problem_type"]), manifest["thresholds"]
    headline = kind.headline

    def score(outputs: np.ndarray) -> float:
        return kind.validation_scores(test.targets, outputs, thresholds)[headline]

    def agreement(outputs: np.ndarray, reference: np.ndarray) -> float:
        decided, expected = kind.decide(outputs, thresholds), kind.decide(reference, thresholds)
        same = decided.reshape(len(decided), -1) == expected.reshape(len(expected), -1)  # (n, 1) or (n, L)
        return float(np.mean(same.all(axis=1)))

    floats = outputs_of(load_float(export_dir), test.texts, test.text_pairs)
    variants = {"int8": load_int8} if (export_dir / INT8_FILE).is_file() else {}
    if (export_dir / ONNX_FILES["int8"]).is_file():
        variants.update({f"onnx_{v}": lambda d, v=v: load_onnx(d, v, manifest=manifest) for v in ONNX_FILES})
    result: dict[str, Any] = {"split": "test", "n": len(test.texts), f"float_{headline}": score(floats)}
    for name, loader in variants.items():
        outputs = outputs_of(loader(export_dir), test.texts, test.text_pairs)
        result[f"{name}_{headline}"] = score(outputs)
        if name.endswith("int8"):
            result[f"{name}_{headline}_change"] = result[f"{name}_{headline}"] - result[f"float_{headline}"]
            if not kind.gives_values:
                result[f"{name}_agreement"] = agreement(outputs, floats)
    return result


def load_float(export_dir: str | Path) -> Predict:
    """The float SavedModel's `serving_default` as texts (and a pair task's text pairs) -> probabilities or values
    (plain TensorFlow + tensorflow-text)."""
    import tensorflow as tf
    import tensorflow_text  # noqa: F401 - registers the tokenizer ops the graph uses

    serve = tf.saved_model.load(str(Path(export_dir) / SAVED_MODEL_DIR)).signatures["serving_default"]
    (output,) = serve.structured_outputs  # probabilities or values

    def predict(texts: list[str], text_pairs: list[str] | None = None) -> np.ndarray:
        pair = {} if text_pairs is None else {"text_pair": tf.constant(list(text_pairs), tf.string)}
        return serve(text=tf.constant(list(texts), tf.string), **pair)[output].numpy()

    return predict


def load_int8(export_dir: str | Path, threads: int | None = None) -> Predict:
    """The int8 TFLite model's `serving_default` as texts (and text pairs) -> probabilities or values,
    tensorflow-text's kernels registered."""
    import warnings

    import tensorflow_text
    from tensorflow.lite.python.interpreter import InterpreterWithCustomOps

    # tf.lite's notice that the interpreter moves to the ai-edge-litert package, and the line XNNPACK prints from C++
    # when the first call creates its delegate (made here, on one text)
    with warnings.catch_warnings(), native_notices_silenced():
        warnings.simplefilter("ignore", UserWarning)
        interpreter = InterpreterWithCustomOps(
            model_path=str(Path(export_dir) / INT8_FILE),
            custom_op_registerers=tensorflow_text.tflite_registrar.SELECT_TFTEXT_OPS,
            num_threads=threads,
        )
        runner = interpreter.get_signature_runner("serving_default")
        one = {name: np.array(["a"], dtype=object) for name in runner.get_input_details()}  # text (and text_pair)
        runner(**one)

    def predict(texts: list[str], text_pairs: list[str] | None = None) -> np.ndarray:
        pair = {} if text_pairs is None else {"text_pair": np.array(list(text_pairs), dtype=object)}
        (output,) = runner(text=np.array(list(texts), dtype=object), **pair).values()  # probabilities or values
        return output

    return predict


def load_onnx(
    export_dir: str | Path, variant: str = "int8", threads: int | None = None, manifest: dict | None = None
) -> Predict:
    """The ONNX model (`float` or `int8`) as texts (and text pairs) -> probabilities or values, tokenised by
    `tokenizer.json` (onnxruntime and tokenizers only); `manifest` is the export's export.json, read from `export_dir`
    when not given."""
    from tokenizers import Tokenizer

    from core.onnx import Session

    export_dir = Path(export_dir)
    manifest = manifest or json.loads((export_dir / EXPORT_JSON).read_text(encoding="utf-8"))
    window, pad_id = manifest["max_length"], manifest["onnx"]["pad_id"]
    tokenizer = Tokenizer.from_file(str(export_dir / TOKENIZER_FILE))
    tokenizer.enable_truncation(window)  # [CLS] and [SEP] kept, as the run cuts pairs (longest_first) and heads
    tokenizer.enable_padding(pad_id=pad_id)
    # An export written before `long_text` read heads; a longer single text is otherwise cut as the run cut it.
    reading = Reading(manifest.get("long_text", HEAD))
    whole = None if reading.long_text == HEAD else Tokenizer.from_file(str(export_dir / TOKENIZER_FILE))
    session = Session(export_dir / ONNX_FILES[variant], threads)
    empty = kinds.get(manifest["problem_type"]).empty_outputs(len(manifest["labels"]))

    def predict(texts: list[str], text_pairs: list[str] | None = None) -> np.ndarray:
        if not texts:
            return empty
        inputs = [str(text) for text in texts]
        if text_pairs is not None:
            inputs = list(zip(inputs, map(str, text_pairs), strict=True))
        if text_pairs is None and whole is not None:  # untruncated, then cut as the run cuts
            rows = [e.ids for e in whole.encode_batch(inputs)]
            rows = [[*row[:1], *reading.cut(row[1:-1], window - 2, window), *row[-1:]] for row in rows]
            width = max(map(len, rows))
            ids = np.array([row + [pad_id] * (width - len(row)) for row in rows], np.int32)  # (B, T)
            return session(
                input_ids=ids, attention_mask=(np.arange(width) < np.array([[len(r)] for r in rows])).astype(np.int32)
            )
        encodings = tokenizer.encode_batch(inputs)
        ids = np.array([e.ids for e in encodings], np.int32)  # (B, T)
        mask = np.array([e.attention_mask for e in encodings], np.int32)  # (B, T)
        if text_pairs is None:
            return session(input_ids=ids, attention_mask=mask)
        types = np.array([e.type_ids for e in encodings], np.int32)  # (B, T)
        return session(input_ids=ids, attention_mask=mask, token_type_ids=types)

    return predict


def _size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.is_dir() else path.stat().st_size


__all__ = [
    "EXPORT_JSON",
    "INT8_FILE",
    "LABELS_FILE",
    "ONNX_FILES",
    "SAVED_MODEL_DIR",
    "export",
    "export_run",
    "load_float",
    "load_int8",
    "load_onnx",
]
