"""What each model costs: size and training time from its run, prediction speed measured here."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from core.classifier import Classifier
from core.rundir import dir_size

BATCH = 256  # texts per predict_proba call when predicting a whole split


def run_costs(run: dict, run_dir: Path) -> dict:
    """Parameters, size on disk, training seconds, epochs and train rows, from the run's own record."""
    return {
        "params": run["model"]["params"],
        "disk_bytes": dir_size(run_dir),
        "train_seconds": run["training"]["seconds"],
        "epochs": run["training"]["epochs_run"],
        "train_rows": run["data"]["splits"].get("train"),
    }


def predict_split(model: Classifier, texts: list[str]) -> tuple[np.ndarray, float]:
    """Probabilities for every text, in batches, and the batched throughput in texts per second.

    One small call first warms up (graph tracing, first allocations) so it does not count as throughput.
    """
    model.predict_proba(texts[: min(8, len(texts))])
    start = time.perf_counter()
    probs = np.concatenate([model.predict_proba(texts[i : i + BATCH]) for i in range(0, len(texts), BATCH)])
    seconds = time.perf_counter() - start
    expected = (len(texts), len(model.labels))
    if probs.shape != expected:
        raise ValueError(f"{model.name} returned probabilities of shape {probs.shape}, expected {expected}.")
    return probs.astype(np.float64), len(texts) / max(seconds, 1e-9)


def single_text_latency(model: Classifier, texts: list[str], samples: int) -> dict:
    """Median and 95th-percentile milliseconds of `predict_proba([text])` over `samples` texts."""
    picked = [texts[i % len(texts)] for i in range(samples)]
    model.predict_proba(picked[:1])
    times = []
    for text in picked:
        start = time.perf_counter()
        model.predict_proba([text])
        times.append((time.perf_counter() - start) * 1000)
    return {"latency_p50_ms": float(np.percentile(times, 50)), "latency_p95_ms": float(np.percentile(times, 95))}
