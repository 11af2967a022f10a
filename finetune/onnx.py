"""The fine-tuned model in ONNX (`core.onnx`): token ids and attention mask (and a pair task's segment ids) in,
probabilities or a regression run's values out.

A full-size model is converted in a process of its own, `python -m finetune.onnx MODEL_DIR OUTPUT` on the model
that `save_pretrained` wrote (`convert_saved`): tf2onnx's passes over a BERT graph take memory many times the model's
size, which a training process, holding its model, optimizer state and datasets, would add to its own. A model of
fewer than `IN_PROCESS_WEIGHTS` weights is converted in the run's process, where the converter's memory is small
and the child's start (importing TensorFlow, loading the model) would cost more than the conversion
(`convert_run_model`). The run's process keeps its model and checks the file against it (`write_checked`).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import tensorflow as tf

from core import kinds
from core.console import notices_shown
from core.onnx import CONVERTER_ENVIRONMENT, Session, convert, keep_if_faithful
from core.processes import run_command

# Below this many weights the conversion runs in the caller's process (a tenth of all-MiniLM-L6-v2's 22.7 million).
IN_PROCESS_WEIGHTS = 2_000_000


def convert_model(model: tf.keras.Model, path: Path, pairs: bool = False) -> float:
    """Writes `model` (a transformers TF sequence classifier, of the kind its config's `problem_type` names) as ONNX
    to `path`; returns the seconds it took.

    Inputs `input_ids`, `attention_mask` and with `pairs` `token_type_ids`, int32 (batch, length); output
    `probabilities`, float32 (batch, K), or for regression `values`, float32 (batch,).
    """
    names = ["input_ids", "attention_mask", *(["token_type_ids"] if pairs else [])]
    spec = [tf.TensorSpec((None, None), tf.int32, name=name) for name in names]
    kind = kinds.get(model.config.problem_type)

    @tf.function(input_signature=spec)
    def outputs(*inputs):
        logits = model(**dict(zip(names, inputs, strict=True)), training=False).logits  # (B, K)
        return tf.identity(kind.activate(logits), name=kind.outputs)

    return convert(outputs, spec, path)


def convert_saved(model_dir: Path, path: Path, dtype_policy: str = "float32", pairs: bool = False) -> float:
    """Converts the `save_pretrained` classifier in `model_dir` to ONNX at `path` in a child process; returns the
    seconds it took.

    Args:
        dtype_policy: the Keras dtype policy the model computes in (`mixed_float16` for a run trained so).
        pairs: the model reads text pairs (takes `token_type_ids`).
    Raises:
        core.processes.ProcessError: the conversion failed; the message ends with what the converter said.
    """
    start = time.perf_counter()
    cmd = [sys.executable, "-m", "finetune.onnx", model_dir, path, "--dtype-policy", dtype_policy]
    cmd += ["--pairs"] if pairs else []
    # Its output (TensorFlow and tf2onnx notices) only with --verbose; a failure's last lines are in the ProcessError.
    run_command(cmd, log=None if notices_shown() else os.devnull, env=CONVERTER_ENVIRONMENT)
    return time.perf_counter() - start


def convert_run_model(model: tf.keras.Model, run_dir: Path, path: Path, pairs: bool = False) -> float:
    """Writes the run's model (`model`, as saved in `run_dir`) as ONNX to `path`: in this process when it has fewer
    than `IN_PROCESS_WEIGHTS` weights, else in a child process from `run_dir`; returns the seconds it took."""
    if model.count_params() < IN_PROCESS_WEIGHTS:
        return convert_model(model, path, pairs)
    return convert_saved(run_dir, path, model.dtype_policy.name, pairs)


class OnnxForward:
    """`model.onnx` as the model's forward pass: (ids, mask[, segment ids]) int32 (B, T) -> probabilities (B, K) or
    values (B,)."""

    def __init__(self, path: str | Path):
        self.session = Session(path)

    def __call__(self, input_ids: np.ndarray, attention_mask: np.ndarray, token_type_ids: np.ndarray | None = None):
        inputs = {"input_ids": input_ids, "attention_mask": attention_mask, "token_type_ids": token_type_ids}
        return self.session(**{name: np.asarray(x, np.int32) for name, x in inputs.items() if x is not None})


def write_checked(
    classifier, texts: list[str], text_pairs: list[str] | None, reference: np.ndarray, run_dir: Path
) -> dict[str, Any]:
    """The run's `model.onnx`, converted from the model saved in `run_dir`, kept when it reproduces `reference`
    (TensorFlow's outputs of `texts`, with `text_pairs` for a pair task)."""
    from finetune.predict import FinetunedClassifier

    def predict(path: Path) -> np.ndarray:
        onnx = FinetunedClassifier(
            classifier.model,
            classifier.tokenizer,
            classifier.max_length,
            forward=OnnxForward(path),
            kind=classifier.kind,
            labels=classifier.labels,
            has_pairs=classifier.has_pairs,
        )
        return onnx.outputs(texts, text_pairs)

    convert = lambda path: convert_run_model(classifier.model, run_dir, path, classifier.has_pairs)  # noqa: E731
    return keep_if_faithful(run_dir, convert, reference, predict)


def main(argv: list[str] | None = None) -> int:
    """`python -m finetune.onnx MODEL_DIR OUTPUT [--dtype-policy P]`: what `convert_saved` starts."""
    parser = argparse.ArgumentParser(
        prog="python -m finetune.onnx",
        description="Convert a save_pretrained TF sequence classifier to ONNX (probabilities or values out).",
        allow_abbrev=False,
    )
    parser.add_argument("model_dir", type=Path, help="A directory written by save_pretrained.")
    parser.add_argument("output", type=Path, help="The ONNX file to write.")
    parser.add_argument("--dtype-policy", default="float32", help="The Keras dtype policy the model computes in.")
    parser.add_argument("--pairs", action="store_true", help="The model reads text pairs (takes token_type_ids).")
    args = parser.parse_args(argv)
    from finetune.predict import load_model

    tf.keras.mixed_precision.set_global_policy(args.dtype_policy)
    convert_model(load_model(args.model_dir), args.output, args.pairs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
