"""Serving exports (`python -m <side> export RUN_DIR --output-dir DIR`): raw strings in, probabilities out.

Each side builds a `tf.Module` whose `serve(text)` maps a `tf.string` batch (B,) to `{"probabilities": (B, K)}`
with its tokenizer inside the graph; a side whose tokenizer TFLite can run also gives `serve_lite`, the same
computation written with TFLite-convertible ops, which becomes the int8 variant (dynamic-range quantization:
int8 weights, activations quantized on the fly). This module writes, into `DIR.partial/` renamed to `DIR` when
complete (docs/formats.md, "Serving export"):

- `saved_model/`: the float SavedModel, signature `serving_default` (input `text`, output `probabilities`);
- `model_int8.tflite`: the int8 variant, signature `serving_default` with the same names;
- `model.onnx`, `model_int8.onnx`, `tokenizer.json`: (fine-tuned side) the same classifier for ONNX Runtime, float and
  int8 (dynamic quantization), taking token ids from the Hugging Face tokenizer in `tokenizer.json`;
- `labels.txt`: the class names in probability-column order;
- `export.json`: what was exported and both variants' test-split accuracy.

Reading the TensorFlow files needs TensorFlow and tensorflow-text only, the ONNX ones onnxruntime and tokenizers
only: `load_float`, `load_int8` and `load_onnx` are what a user writes.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from core.args import DataArguments, ExportArguments
from core.classifier import predict_in_batches
from core.rundir import (
    RESUME_FILE,
    SAVED_MODEL_DIR,
    RunError,
    environment,
    package_version,
    partial_path,
    read_run_json,
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

Predict = Callable[[list[str]], np.ndarray]  # texts -> probabilities (n, K)


class Untracked:
    """A plain holder that `tf.Module` attribute tracking does not look into: a serving module keeps its Keras
    model here, so that only the traced functions, not the model's Python-side state, are saved."""

    def __init__(self, model: Any):
        self.model = model


def export_run(args: ExportArguments, side: str, build: Callable[[Path, dict[str, Any]], Any]) -> None:
    """`python -m <side> export RUN_DIR --output-dir DIR`: builds the side's module with `build(run_dir, run)` and
    exports it. A bad run or output directory, or a missing data file, is refused before the model loads."""
    run = read_export_run(args.run_dir, side)
    check_output_dir(args)  # before the model loads
    test = read_test_split(run) if args.evaluate else None  # a missing data file, before the slow conversions
    export(args, run, build(Path(args.run_dir), run), test)


def read_export_run(run_dir: str | Path, side: str) -> dict[str, Any]:
    """The run's validated run.json, refusing a translation run and a run of the other side."""
    if is_translation_run(run_dir):
        raise RunError(f"{run_dir} is a translation run; its saved_model/ is already its serving export.")
    run = read_run_json(run_dir)
    if run["side"] != side:
        raise RunError(f"{run_dir} is a {run['side']} run; export it with python -m {run['side']} export.")
    return run


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


def read_test_split(run: dict[str, Any]) -> tuple[list[str], np.ndarray]:
    """The run's test texts and gold label ids, read from the data options it recorded."""
    from core.data import DataError, load_task

    try:
        task = load_task(DataArguments(**run["data"]["options"]))
    except DataError as error:
        raise RunError(
            f"{error} The export is scored on the run's test split; pass --no-evaluate to skip it."
        ) from None
    return task.texts("test"), task.label_ids("test")


def export(
    args: ExportArguments, run: dict[str, Any], module: Any, test: tuple[list[str], np.ndarray] | None = None
) -> Path:
    """Writes the export of `module` (a side's serving module) for `run` into `args.output_dir`; returns it.

    `test` (texts, gold label ids) is scored when given. Nothing is left in `DIR.partial/` when this fails.
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


def _write(
    args: ExportArguments, run: dict[str, Any], module: Any, test: tuple[list[str], np.ndarray] | None, partial: Path
) -> None:
    import tensorflow as tf

    logger.info("Saving the float SavedModel to %s", partial / SAVED_MODEL_DIR)
    tf.saved_model.save(module, str(partial / SAVED_MODEL_DIR), signatures={"serving_default": module.serve})
    labels = list(run["data"]["labels"])
    (partial / LABELS_FILE).write_text("".join(f"{label}\n" for label in labels), encoding="utf-8")
    int8_note = getattr(module, "int8_note", None)
    if hasattr(module, "serve_lite"):
        logger.info("Converting to TFLite with dynamic-range int8 quantization")
        (partial / INT8_FILE).write_bytes(convert_int8(module))
        try:  # a converted graph can hold ops the interpreter cannot run; find out now, not when it is served
            load_int8(partial)(["a"])
        except (RuntimeError, ValueError) as error:
            raise RunError(f"The int8 TFLite model converted from {args.run_dir} does not run: {error}") from None
    onnx = module.write_onnx(partial) if hasattr(module, "write_onnx") else None

    record: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "side": run["side"],
        "run": str(Path(args.run_dir).resolve()),
        "run_created": run.get("created"),
        "labels": labels,
        "max_length": run["data"]["options"]["max_length"],
        "tokenizer": getattr(module, "tokenizer_note", ""),
        "float": {"path": SAVED_MODEL_DIR, "bytes": _size(partial / SAVED_MODEL_DIR)},
        "int8": None,
        "onnx": onnx,
    }
    if (partial / INT8_FILE).is_file():
        record["int8"] = {
            "path": INT8_FILE,
            "bytes": _size(partial / INT8_FILE),
            "quantization": "dynamic-range (TFLite): int8 weights, activations quantized per call",
        }
    else:
        record["int8_note"] = int8_note
    if test is not None:
        record["test"] = evaluate_export(partial, record, *test)
    record["environment"] = {**environment(), "tensorflow_text": package_version("tensorflow-text")}
    record["created"] = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    write_json(partial / EXPORT_JSON, record)


def convert_int8(module: Any) -> bytes:
    """`module.serve_lite` as a TFLite flatbuffer with int8 weights (signature `serving_default`)."""
    import tensorflow as tf

    function = module.serve_lite.get_concrete_function()
    converter = tf.lite.TFLiteConverter.from_concrete_functions([function], module)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]  # without a representative dataset: dynamic range
    converter.allow_custom_ops = True  # the tensorflow-text tokenizer ops, registered by the interpreter
    return converter.convert()


def evaluate_export(export_dir: Path, record: dict[str, Any], texts: list[str], gold: np.ndarray) -> dict[str, Any]:
    """Accuracy of the written files on the run's test split, and how often int8 picks the float label."""
    logger.info("Scoring the export on the %d test texts", len(texts))

    def labels_of(predict: Predict) -> np.ndarray:
        return predict_in_batches(predict, texts, EVAL_BATCH).argmax(axis=1)

    float_labels = labels_of(load_float(export_dir))
    result: dict[str, Any] = {"split": "test", "n": len(texts), "float_accuracy": float(np.mean(float_labels == gold))}
    if (export_dir / INT8_FILE).is_file():
        int8_labels = labels_of(load_int8(export_dir))
        result["int8_accuracy"] = float(np.mean(int8_labels == gold))
        result["int8_accuracy_change"] = result["int8_accuracy"] - result["float_accuracy"]
        result["int8_agreement"] = float(np.mean(int8_labels == float_labels))
    if (export_dir / ONNX_FILES["int8"]).is_file():
        onnx_labels = {v: labels_of(load_onnx(export_dir, v, record=record)) for v in ONNX_FILES}
        result["onnx_float_accuracy"] = float(np.mean(onnx_labels["float"] == gold))
        result["onnx_int8_accuracy"] = float(np.mean(onnx_labels["int8"] == gold))
        result["onnx_int8_accuracy_change"] = result["onnx_int8_accuracy"] - result["float_accuracy"]
        result["onnx_int8_agreement"] = float(np.mean(onnx_labels["int8"] == float_labels))
    return result


def load_float(export_dir: str | Path) -> Predict:
    """The float SavedModel's `serving_default` as texts -> probabilities (plain TensorFlow + tensorflow-text)."""
    import tensorflow as tf
    import tensorflow_text  # noqa: F401 - registers the tokenizer ops the graph uses

    serve = tf.saved_model.load(str(Path(export_dir) / SAVED_MODEL_DIR)).signatures["serving_default"]
    return lambda texts: serve(text=tf.constant(list(texts), tf.string))["probabilities"].numpy()


def load_int8(export_dir: str | Path, threads: int | None = None) -> Predict:
    """The int8 TFLite model's `serving_default` as texts -> probabilities, tensorflow-text's kernels registered."""
    import warnings

    import tensorflow_text
    from tensorflow.lite.python.interpreter import InterpreterWithCustomOps

    with warnings.catch_warnings():  # tf.lite's notice that the interpreter moves to the ai-edge-litert package
        warnings.simplefilter("ignore", UserWarning)
        interpreter = InterpreterWithCustomOps(
            model_path=str(Path(export_dir) / INT8_FILE),
            custom_op_registerers=tensorflow_text.tflite_registrar.SELECT_TFTEXT_OPS,
            num_threads=threads,
        )
    runner = interpreter.get_signature_runner("serving_default")
    return lambda texts: runner(text=np.array(list(texts), dtype=object))["probabilities"]


def load_onnx(
    export_dir: str | Path, variant: str = "int8", threads: int | None = None, record: dict | None = None
) -> Predict:
    """The ONNX model (`float` or `int8`) as texts -> probabilities, tokenised by `tokenizer.json` (onnxruntime and
    tokenizers only); `record` is the export's export.json, read from `export_dir` when not given."""
    from tokenizers import Tokenizer

    from core.onnx import Session

    export_dir = Path(export_dir)
    record = record or json.loads((export_dir / EXPORT_JSON).read_text(encoding="utf-8"))
    tokenizer = Tokenizer.from_file(str(export_dir / TOKENIZER_FILE))
    tokenizer.enable_truncation(record["max_length"])  # [CLS] and [SEP] kept, as the run cuts texts
    tokenizer.enable_padding(pad_id=record["onnx"]["pad_id"])
    session = Session(export_dir / ONNX_FILES[variant], threads)
    classes = len(record["labels"])

    def predict(texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, classes), np.float32)
        encodings = tokenizer.encode_batch([str(text) for text in texts])
        ids = np.array([e.ids for e in encodings], np.int32)  # (B, T)
        mask = np.array([e.attention_mask for e in encodings], np.int32)  # (B, T)
        return session(input_ids=ids, attention_mask=mask)

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
