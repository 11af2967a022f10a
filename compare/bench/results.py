"""`bench.json` from the stages' raw measurements: ratios, utilisation, and which targets are met.

Every headline figure is a ratio or a fraction of two things measured in the same process at the same time
(real against padded batches in alternating rounds, useful FLOPs against the matmul rate measured between
those rounds), so it holds on a machine that others are using too.
"""

from __future__ import annotations

import numpy as np

from compare.bench.flops import EncoderShape, training_flops, utilisation
from core import sides

APP_TARGETS = [("app", None, "errors", "<=", 0, "app errors under load")]


def targets() -> list[tuple[str, str | None, str, str, float, str]]:
    """Every benchmarked side's targets (`core.sides.Benchmark.targets`), then the app's: (section, side or None,
    key, comparison, threshold, what it means). A side's training figures are its own section of bench.json."""
    rows = []
    for side in sides.SIDES.values():
        for target in side.bench.targets if side.bench else ():
            section, entry = (side.name, None) if target.stage == "training" else (target.stage, side.name)
            rows.append((section, entry, target.key, target.op, target.threshold, target.label))
    return rows + APP_TARGETS


def expand_lengths(histogram: dict[str, int]) -> np.ndarray:
    """`{"13": 5, ...}` (real length -> texts) as one length per text."""
    return np.repeat([int(k) for k in histogram], [int(v) for v in histogram.values()])


def training_entry(stage: dict) -> dict:
    """One side's training figures from its throughput process's output."""
    shape = EncoderShape.from_dict(stage["shape"])
    rounds = stage["rounds"]
    examples = sum(r["examples"] for r in rounds)
    real_s = sum(r["real_seconds"] for r in rounds)
    pad_s = sum(r["pad_seconds"] for r in rounds)
    useful = sum(training_flops(shape, expand_lengths(r["lengths"])) for r in rounds)
    gflops = float(np.mean([r["matmul_gflops"] for r in rounds] + [stage["final_matmul_gflops"]]))
    per_round = [r["pad_seconds"] / r["real_seconds"] for r in rounds]
    return {
        "speedup_vs_pad128": pad_s / real_s,
        "examples_per_s": examples / real_s,
        "pad128_examples_per_s": examples / pad_s,
        "useful_flops_utilisation": utilisation(useful, real_s, gflops),
        "pad128_useful_flops_utilisation": utilisation(useful, pad_s, gflops),
        "peak_rss_mb": stage["peak_rss_mb"],
        "matmul_gflops": gflops,
        "speedup_per_round": per_round,
        "useful_gflop_per_example": useful / examples / 1e9,
        "real_token_share": sum(int(k) * v for r in rounds for k, v in r["lengths"].items())
        / sum(r["real_positions"] for r in rounds),
        "pad128_real_token_share": sum(int(k) * v for r in rounds for k, v in r["lengths"].items())
        / sum(r["pad_positions"] for r in rounds),
        "examples_timed": examples,
        "batch_size": stage["batch_size"],
        "max_length": stage["max_length"],
        "model": stage["model"],
        "params": stage["shape"].get("params"),
    }


SERVING_KEYS = (
    "runtime",
    "current",
    "float",
    "int8",
    "onnx_int8",
    "float_vs_current_p50",
    "int8_vs_current_p50",
    "onnx_int8_vs_current_p50",
    "float_accuracy",
    "int8_accuracy",
    "int8_accuracy_change",
    "int8_agreement",
    "onnx_int8_accuracy",
    "onnx_int8_accuracy_change",
    "onnx_int8_agreement",
    "peak_rss_mb",
)


def assemble(
    training: dict[str, dict], predict: dict[str, dict], app: dict, serving: dict[str, dict] | None = None
) -> dict:
    """The measured sections of bench.json, plus `targets` (each with its value and whether it is met).

    `training` and `predict` hold what each side's stage printed, by side; `serving` (per side, what
    `compare.bench.serving` printed) becomes the `serving` section when given.
    """
    bench = {side: training_entry(stage) for side, stage in training.items()}
    bench["matmul_gflops"] = float(np.mean([bench[side]["matmul_gflops"] for side in training]))
    bench["tokenize"] = {side: stage["tokenize"]["texts_per_s"] for side, stage in training.items()}
    bench["predict"] = {
        side: {key: stage[key] for key in ("p50_ms", "p95_ms", "batch_per_s", "peak_rss_mb")}
        for side, stage in predict.items()
    }
    bench["app"] = app
    if serving is not None:
        bench["serving"] = {side: {key: serving[side].get(key) for key in SERVING_KEYS} for side in serving}
    bench["targets"] = check_targets(bench)
    return bench


def check_targets(bench: dict) -> list[dict]:
    rows = []
    for section, side, key, op, threshold, label in targets():
        entry = bench.get(section, {})
        entry = entry.get(side, {}) if side else entry
        value = _lookup(entry, key)
        met = None if value is None else (value >= threshold if op == ">=" else value <= threshold)
        rows.append(
            {
                "target": label,
                "key": f"{section}.{side}.{key}" if side else f"{section}.{key}",
                "op": op,
                "threshold": threshold,
                "value": value,
                "met": met,
            }
        )
    return rows


def _lookup(entry: dict | None, key: str):
    """`entry[a][b]` for the dotted key `a.b`; None where a part is missing or null."""
    for part in key.split("."):
        if not isinstance(entry, dict):
            return None
        entry = entry.get(part)
    return entry
