"""The from-scratch side's serving module: the saved end-to-end model (tokenizer inside) behind a string signature.

`python -m scratch export RUN_DIR --output-dir DIR` (`core.export` writes the files). `model.keras` already maps
raw strings to probabilities, so `serve` only calls it. There is no int8 variant: the tokenizers use TensorFlow
string and lookup-table ops (`TextVectorization`, or tensorflow-text's `BertTokenizer`) that the TFLite
interpreter cannot run without the Flex delegate, which TensorFlow's Python package does not link.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tensorflow as tf

from core.args import ExportArguments
from core.export import Untracked
from core.runtime import STRINGS

INT8_NOTE = (
    "no int8 variant: the from-scratch tokenizer needs TensorFlow string ops that the TFLite interpreter "
    "runs only through the Flex delegate, which TensorFlow's Python package does not link"
)


class ScratchServing(tf.Module):
    """Strings (B,) -> `{"probabilities": (B, K)}` through the run's end-to-end Keras model.

    Args:
        model: the loaded `model.keras` (strings (B,) -> probabilities (B, K)).
    """

    int8_note = INT8_NOTE

    def __init__(self, model: tf.keras.Model):
        super().__init__(name="scratch_classifier")
        self._untracked = Untracked(model)
        self.weights = list(model.weights)  # what `serve` captures; the Keras model's own traces are not saved
        self.tokenizer = model.get_layer("tokenizer")  # tracked for its lookup tables
        self.tokenizer_note = f"{type(self.tokenizer).__name__} ({len(self.tokenizer.vocabulary)} tokens)"

    @tf.function(input_signature=[STRINGS])
    def serve(self, text: tf.Tensor) -> dict[str, tf.Tensor]:
        return {"probabilities": self._untracked.model(text, training=False)}  # (B, K)


def build(run_dir: Path, run: dict[str, Any]) -> ScratchServing:
    """The serving module of a finished from-scratch run (what `core.export` saves)."""
    from scratch.predict import load

    return ScratchServing(load(run_dir, run).model)


def export_run(args: ExportArguments) -> None:
    """`python -m scratch export RUN_DIR --output-dir DIR [--overwrite] [--no-evaluate]` (`core.export`)."""
    from core.export import export_run as export

    export(args, "scratch", build)
