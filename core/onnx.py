"""A trained classifier's network as an ONNX graph for ONNX Runtime, kept only when it reproduces TensorFlow.

For one short text, TensorFlow spends most of its milliseconds dispatching the graph's many small ops; ONNX
Runtime runs the same arithmetic with fused attention, LayerNorm and GELU kernels in a fraction of the time
(`python -m compare bench` measures both side by side). At the end of training each side converts its network
with tf2onnx into the run's `model.onnx` (`convert`; the fine-tuned side in a process of its own, `finetune.onnx`), scores the validation split through it and through
TensorFlow, and keeps the file only when the two agree (`keep_if_faithful`); the side's `predict.load` then
serves the run through it (`Session`). `quantize` writes the export's int8 variant.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from core.console import library_logs_quiet

if TYPE_CHECKING:
    from core.record import RunRecord

ONNX_FILE = "model.onnx"
OPSET = 17
MAX_DIFFERENCE = 1e-4  # largest probability difference from TensorFlow at which the ONNX model is kept
# For a process that only converts (`finetune.onnx`): protobuf's pure-Python messages. tf2onnx rewrites every node's
# attributes after each of its optimizer passes, and protobuf's default (upb) messages keep each replaced copy in
# their memory arena until the node is freed, so every pass added the weights' size again; Python messages free
# them (docs/results.md, "Memory of the ONNX export").
CONVERTER_ENVIRONMENT = {"PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION": "python"}

logger = logging.getLogger(__name__)


def _erfc(ctx, node, name, args) -> None:
    """Erfc(x) = 1 - Erf(x). Keras' exact GELU is written with Erfc, which ONNX lacks."""
    from tf2onnx import utils

    node.type = "Erf"
    dtype = utils.map_onnx_to_numpy_type(ctx.get_dtype(node.input[0]))
    one = ctx.make_const(utils.make_name(f"{name}_one"), np.array(1, dtype=dtype))
    ctx.insert_new_node_on_output("Sub", node.output[0], inputs=[one.output[0], node.output[0]])


def convert(function, input_signature: list, path: Path) -> float:
    """Writes the `tf.function` `function` over `input_signature` (named `tf.TensorSpec`s) as ONNX to `path`;
    returns the seconds it took. The ONNX inputs take the specs' names."""
    import tf2onnx

    logging.getLogger("tf2onnx").setLevel(logging.WARNING)
    start = time.perf_counter()
    tf2onnx.convert.from_function(
        function,
        input_signature=input_signature,
        opset=OPSET,
        custom_op_handlers={"Erfc": (_erfc, [])},
        output_path=str(path),
    )
    return time.perf_counter() - start


QUANTIZATION = (
    "dynamic (ONNX Runtime): int8 weights per output channel in a 7-bit range, activations quantized per call"
)


def quantize(source: Path, target: Path) -> None:
    """ONNX Runtime's dynamic int8 quantization of `source`: weights per output channel, activations per call.

    The 7-bit weight range (`reduce_range`) keeps the int8 products from saturating on CPUs without VNNI, and per
    channel it costs less accuracy than the per-tensor, full-range default
    (docs/results.md, "Serving through ONNX Runtime").
    """
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with library_logs_quiet():  # the quantizer logs every tensor it leaves in float on the root logger
        quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8, per_channel=True, reduce_range=True)


class Session:
    """An ONNX file in an ONNX Runtime session, called with its inputs by name: `session(input_ids=..., ...)`.

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

    def __call__(self, **inputs: np.ndarray) -> np.ndarray:
        return self.session.run([self.output], inputs)[0]


def check(reference: np.ndarray, candidate: np.ndarray) -> dict[str, Any]:
    """How closely `candidate` probabilities (n, K) or values (n,) reproduce `reference`, and whether that is close
    enough; `label_agreement` is that of the most probable class (1.0 for values)."""
    difference = float(np.max(np.abs(reference - candidate))) if len(reference) else 0.0
    agreement = 1.0
    if len(reference) and reference.ndim == 2:
        agreement = float(np.mean(reference.argmax(axis=1) == candidate.argmax(axis=1)))
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


def keep_if_faithful(
    run_dir: Path,
    write: Callable[[Path], float],
    reference: np.ndarray,
    predict: Callable[[Path], np.ndarray],
) -> dict[str, Any]:
    """Writes `run_dir/model.onnx` and keeps it only if it reproduces TensorFlow; returns run.json's `serving`.

    Args:
        write: writes the ONNX file to the path it is given and returns the seconds it took.
        reference: TensorFlow's outputs on the validation split: probabilities (n, K) or values (n,).
        predict: the validation split's outputs through the ONNX file at the path it is given.
    """
    reason = available()
    if reason:
        return {"runtime": "tensorflow", "note": reason}
    path = Path(run_dir) / ONNX_FILE
    try:
        seconds = write(path)
    except Exception as error:  # noqa: BLE001 - a network the converter cannot take still has its TensorFlow path
        path.unlink(missing_ok=True)
        logger.warning("tf2onnx could not convert the model (%s); the run is served through TensorFlow.", error)
        return {"runtime": "tensorflow", "note": f"tf2onnx could not convert the model: {error}"}
    checked = check(reference, predict(path))
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


def serving_runtime(record: RunRecord) -> str:
    """`onnxruntime` when the run kept a checked ONNX model and ONNX Runtime imports, else `tensorflow`."""
    if (record.serving or {}).get("runtime") != "onnxruntime":
        return "tensorflow"
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return "tensorflow"
    return "onnxruntime"


def onnx_forward(run_dir: Path, record: RunRecord, runtime: str | None, forward: Callable[[Path], Any]) -> Any | None:
    """The forward pass a side's classifier runs a finished run with: `forward` of the run's ONNX file when the
    runtime asked for (by default run.json's, `serving_runtime`) is ONNX Runtime; None for the side's TensorFlow
    model."""
    if (runtime or serving_runtime(record)) == "onnxruntime":
        return forward(onnx_path(run_dir, record))
    return None


def onnx_path(run_dir: Path, record: RunRecord) -> Path:
    """The run's checked ONNX file, or a RunError naming it when it is gone."""
    from core.rundir import RunError

    path = Path(run_dir) / ((record.serving or {}).get("file") or ONNX_FILE)
    if not path.is_file():
        raise RunError(f"{run_dir} has no {path.name}, which its run.json serves it through; train it again.")
    return path
