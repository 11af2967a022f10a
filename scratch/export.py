"""The from-scratch side's serving module: the saved end-to-end model (tokenizer inside) behind a string signature.

`python -m scratch export RUN_DIR --output-dir DIR` (`core.export` writes the files). `model.keras` already maps
raw strings to probabilities (or a regression run's values), so `serve` only calls it: `serve(text)`, or for a pair
task `serve(text, text_pair)`. There is no int8 variant: the tokenizers use TensorFlow string and lookup-table ops
(`TextVectorization`, or tensorflow-text's `BertTokenizer`) that the TFLite interpreter cannot run without the Flex
delegate, which TensorFlow's Python package does not link.
"""

from __future__ import annotations

from pathlib import Path

import tensorflow as tf

from core.args import ExportArguments
from core.export import Untracked
from core.kinds import Kind
from core.record import RunRecord
from core.runtime import STRINGS

INT8_NOTE = (
    "no int8 variant: the from-scratch tokenizer needs TensorFlow string ops that the TFLite interpreter "
    "runs only through the Flex delegate, which TensorFlow's Python package does not link"
)


class ScratchServing(tf.Module):
    """Strings (B,) -> `{"probabilities": (B, K)}`, or `{"values": (B,)}` for regression, through the run's
    end-to-end Keras model; a pair task's `serve(text, text_pair)` takes the second texts too.

    Args:
        model: the loaded `model.keras` (strings -> probabilities or values).
        kind: the run's kind of task (`core.kinds`).
        has_pairs: whether the run reads text pairs.
        temperatures: the run's calibration (run.json `calibration`), baked into `serve`; None: T = 1.
    """

    int8_note = INT8_NOTE

    def __init__(self, model: tf.keras.Model, kind: Kind, has_pairs: bool, temperatures: list[float] | None = None):
        super().__init__(name="scratch_classifier")
        self._untracked = Untracked(model)
        self._untracked.kind, self._untracked.temperatures = kind, temperatures
        self.weights = list(model.weights)  # what `serve` captures; the Keras model's own traces are not saved
        self.tokenizer = model.get_layer("tokenizer")  # tracked for its lookup tables
        self.tokenizer_note = f"{type(self.tokenizer).__name__} ({len(self.tokenizer.vocabulary)} tokens)"
        self.output = kind.outputs
        if has_pairs:
            pair = [tf.TensorSpec([None], tf.string, name="text"), tf.TensorSpec([None], tf.string, name="text_pair")]
            self.serve = tf.function(self._serve_pair, input_signature=pair)
        else:
            self.serve = tf.function(self._serve, input_signature=[STRINGS])

    def _serve(self, text: tf.Tensor) -> dict[str, tf.Tensor]:
        return {self.output: self._calibrated(self._untracked.model(text, training=False))}  # (B, K) or (B,)

    def _serve_pair(self, text: tf.Tensor, text_pair: tf.Tensor) -> dict[str, tf.Tensor]:
        return {self.output: self._calibrated(self._untracked.model([text, text_pair], training=False))}

    def _calibrated(self, outputs: tf.Tensor) -> tf.Tensor:
        return self._untracked.kind.calibration.apply_tensor(outputs, self._untracked.temperatures)  # (B, K) or (B,)


def build(run_dir: Path, record: RunRecord) -> ScratchServing:
    """The serving module of a finished from-scratch run (what `core.export` saves)."""
    from scratch.predict import load

    return ScratchServing(load(run_dir, record).model, record.kind, record.has_pairs, record.temperatures)


def export_run(args: ExportArguments) -> None:
    """`python -m scratch export RUN_DIR --output-dir DIR [--overwrite] [--no-evaluate]` (`core.export`)."""
    from core.export import export_run as export

    export(args, "scratch", build)
