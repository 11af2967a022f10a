"""`python -m compare.bench.serving --run RUN --export DIR --texts-file F`: a run's serving paths timed side by side.

In one process, the run as `core.classifier.load` serves it (`current`), its exported float SavedModel (`float`)
and, when the export has them, its int8 TFLite model (`int8`) and int8 ONNX model (`onnx_int8`): single-text p50/p95, then batched throughput, each in
alternating rounds (so whatever else the machine does slows all paths alike). The test-split accuracies
come from the export's `export.json`. Prints one JSON object; never imports training code.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.classifier import load, predict_in_batches
from core.export import EXPORT_JSON, load_float, load_int8, load_onnx
from core.parsing import parse_args
from core.throughput import emit

BATCH = 256
ROUNDS = 4

Predict = Callable[[list[str]], np.ndarray]


@dataclass
class ServingBenchArguments:
    run: str = field(metadata={"help": "The run directory (its current serving path)."})
    export: str = field(metadata={"help": "The run's export directory (python -m <side> export)."})
    texts_file: str = field(metadata={"help": "A JSON list of texts to predict."})
    samples: int = field(default=50, metadata={"help": "Single-text predictions timed per path."})


def time_single_texts(paths: dict[str, Predict], texts: list[str], samples: int) -> dict[str, dict]:
    """p50/p95 milliseconds of one-text calls per path, the paths taking turns in `ROUNDS` rounds.

    Each turn starts with one untimed call: the first call after another path pays for the switch (the other
    runtime's spinning threads, cold caches), which a deployed path, serving alone, does not.
    """
    picked = [texts[i % len(texts)] for i in range(samples)]
    for predict in paths.values():
        predict(picked[:1])  # warm-up: tracing, allocation
    times: dict[str, list[float]] = {name: [] for name in paths}
    for part in np.array_split(np.arange(samples), ROUNDS):
        for name, predict in paths.items():
            if not len(part):  # fewer samples than rounds
                continue
            predict([picked[part[0]]])  # the switch from the previous path, untimed
            for i in part:
                start = time.perf_counter()
                predict([picked[i]])
                times[name].append((time.perf_counter() - start) * 1000)
    return {
        name: {"p50_ms": float(np.percentile(values, 50)), "p95_ms": float(np.percentile(values, 95))}
        for name, values in times.items()
    }


def batch_rates(paths: dict[str, Predict], texts: list[str]) -> dict[str, float]:
    """Texts per second of each path over all of `texts` in length-sorted batches of `BATCH`, paths taking turns."""
    seconds = dict.fromkeys(paths, 0.0)
    for predict in paths.values():
        predict(texts[: min(8, len(texts))])
    for part in np.array_split(np.arange(len(texts)), ROUNDS):
        chunk = [texts[i] for i in part]
        for name, predict in paths.items():
            start = time.perf_counter()
            predict_in_batches(predict, chunk, BATCH)
            seconds[name] += time.perf_counter() - start
    return {name: len(texts) / max(spent, 1e-9) for name, spent in seconds.items()}


def measure(run_dir: str | Path, export_dir: str | Path, texts: list[str], samples: int) -> dict:
    record = json.loads((Path(export_dir) / EXPORT_JSON).read_text(encoding="utf-8"))
    classifier = load(run_dir)
    paths: dict[str, Predict] = {"current": classifier.predict_proba, "float": load_float(export_dir)}
    if record.get("int8"):
        paths["int8"] = load_int8(export_dir)
    if record.get("onnx"):
        paths["onnx_int8"] = load_onnx(export_dir, "int8")
    timed = time_single_texts(paths, texts, samples)
    for name, rate in batch_rates(paths, texts).items():
        timed[name]["batch_per_s"] = rate
    test = record.get("test") or {}
    result = {
        "side": classifier.side,
        "run": str(run_dir),
        "export": str(export_dir),
        "texts": len(texts),
        "samples": samples,
        "runtime": getattr(classifier, "runtime", "tensorflow"),
        **{name: timed.get(name) for name in ("current", "float", "int8", "onnx_int8")},
        "float_accuracy": test.get("float_accuracy"),
        "int8_accuracy": test.get("int8_accuracy"),
        "int8_accuracy_change": test.get("int8_accuracy_change"),
        "int8_agreement": test.get("int8_agreement"),
        **{key: test.get(key) for key in ("onnx_int8_accuracy", "onnx_int8_accuracy_change", "onnx_int8_agreement")},
    }
    for name in ("float", "int8", "onnx_int8"):
        if result[name]:
            result[f"{name}_vs_current_p50"] = result[name]["p50_ms"] / result["current"]["p50_ms"]
    return result


def main(argv: list[str] | None = None) -> int:
    (args,) = parse_args((ServingBenchArguments,), argv)
    texts = json.loads(Path(args.texts_file).read_text(encoding="utf-8"))
    emit(measure(args.run, args.export, texts, args.samples))
    return 0


if __name__ == "__main__":
    sys.exit(main())
