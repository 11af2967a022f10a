"""The fine-tuned classifier as an ONNX graph for ONNX Runtime: token ids and mask in, probabilities out.

For one short text, TensorFlow spends most of its milliseconds dispatching the BERT graph's hundreds of small ops;
ONNX Runtime runs the same arithmetic with fused attention, LayerNorm and GELU kernels in a fraction of the time
(`python -m compare bench` measures both side by side). At the end of training `finetune.run` converts the model
with tf2onnx into the run's `model.onnx` and keeps it only when it reproduces the TensorFlow model on the
validation split (`check`); `finetune.predict.load` then serves the run through it. `quantize` writes the export's
int8 variant (dynamic quantization: int8 weights, activations quantized per call).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import numpy as np
import tensorflow as tf

ONNX_FILE = "model.onnx"
OPSET = 17
MAX_DIFFERENCE = 1e-4  # largest probability difference from TensorFlow at which the ONNX model is kept

logger = logging.getLogger(__name__)


def _erfc(ctx, node, name, args) -> None:
    """Erfc(x) = 1 - Erf(x). Keras' exact GELU is written with Erfc, which ONNX lacks."""
    from tf2onnx import utils

    node.type = "Erf"
    dtype = utils.map_onnx_to_numpy_type(ctx.get_dtype(node.input[0]))
    one = ctx.make_const(utils.make_name(f"{name}_one"), np.array(1, dtype=dtype))
    ctx.insert_new_node_on_output("Sub", node.output[0], inputs=[one.output[0], node.output[0]])


def convert(model: tf.keras.Model, path: Path) -> float:
    """Writes `model` (a transformers TF sequence classifier) as ONNX to `path`; returns the seconds it took.

    Inputs `input_ids` and `attention_mask`, int32 (batch, length); output `probabilities`, float32 (batch, K).
    """
    import tf2onnx

    logging.getLogger("tf2onnx").setLevel(logging.WARNING)
    spec = [
        tf.TensorSpec((None, None), tf.int32, name="input_ids"),
        tf.TensorSpec((None, None), tf.int32, name="attention_mask"),
    ]

    @tf.function(input_signature=spec)
    def probabilities(input_ids, attention_mask):
        logits = model(input_ids=input_ids, attention_mask=attention_mask, training=False).logits  # (B, K)
        return tf.identity(tf.nn.softmax(tf.cast(logits, tf.float32), axis=-1), name="probabilities")

    start = time.perf_counter()
    tf2onnx.convert.from_function(
        probabilities,
        input_signature=spec,
        opset=OPSET,
        custom_op_handlers={"Erfc": (_erfc, [])},
        output_path=str(path),
    )
    return time.perf_counter() - start


def quantize(source: Path, target: Path) -> None:
    """ONNX Runtime's dynamic int8 quantization of `source` (int8 weights, activations quantized per call)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8)


class OnnxForward:
    """`model.onnx` in an ONNX Runtime session: (ids, mask) int32 (B, T) -> probabilities float32 (B, K).

    Args:
        path: the ONNX file.
        threads: intra-op threads (ONNX Runtime's default, one per core, when None).
    """

    def __init__(self, path: str | Path, threads: int | None = None):
        import onnxruntime

        options = onnxruntime.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        options.log_severity_level = 3  # errors only
        self.path = Path(path)
        self.session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.output = self.session.get_outputs()[0].name

    def __call__(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        feed = {"input_ids": np.asarray(input_ids, np.int32), "attention_mask": np.asarray(attention_mask, np.int32)}
        return self.session.run([self.output], feed)[0]


def check(reference: np.ndarray, candidate: np.ndarray) -> dict[str, Any]:
    """How closely `candidate` probabilities (n, K) reproduce `reference`, and whether that is close enough."""
    difference = float(np.max(np.abs(reference - candidate))) if len(reference) else 0.0
    agreement = float(np.mean(reference.argmax(axis=1) == candidate.argmax(axis=1))) if len(reference) else 1.0
    return {
        "max_abs_difference": difference,
        "label_agreement": agreement,
        "ok": difference <= MAX_DIFFERENCE and agreement == 1.0,
    }


def available() -> str | None:
    """None when tf2onnx and onnxruntime import, else why not."""
    try:
        import onnxruntime  # noqa: F401
        import tf2onnx  # noqa: F401
    except ImportError as error:
        return f"ONNX serving needs tf2onnx and onnxruntime ({error}); pip install -r requirements.txt installs both"
    return None


def write_checked(classifier, texts: list[str], reference: np.ndarray, run_dir: Path) -> dict[str, Any]:
    """Converts `classifier.model` into `run_dir/model.onnx` and keeps it only if it reproduces `reference`, the
    TensorFlow probabilities of `texts`; returns run.json's `serving` record."""
    from finetune.predict import FinetunedClassifier

    reason = available()
    if reason:
        return {"runtime": "tensorflow", "note": reason}
    path = Path(run_dir) / ONNX_FILE
    try:
        seconds = convert(classifier.model, path)
    except Exception as error:  # noqa: BLE001 - a model the converter cannot take still has its TensorFlow path
        path.unlink(missing_ok=True)
        logger.warning("tf2onnx could not convert the model (%s); the run is served through TensorFlow.", error)
        return {"runtime": "tensorflow", "note": f"tf2onnx could not convert the model: {error}"}
    onnx = FinetunedClassifier(
        classifier.model, classifier.tokenizer, classifier.labels, classifier.max_length, forward=OnnxForward(path)
    )
    checked = check(reference, onnx.predict_proba(texts))
    ok = checked.pop("ok")
    record = {"file": ONNX_FILE, "convert_seconds": round(seconds, 1), "checked_on": "validation", **checked}
    if not ok:
        path.unlink()
        logger.warning(
            "model.onnx differs from the TensorFlow model on validation (max %.2g, labels agree on %.4f); "
            "the run is served through TensorFlow.",
            checked["max_abs_difference"],
            checked["label_agreement"],
        )
        return {"runtime": "tensorflow", **record, "file": None}
    logger.info("model.onnx reproduces the model on validation (max difference %.1g)", checked["max_abs_difference"])
    return {"runtime": "onnxruntime", **record}
