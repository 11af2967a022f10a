"""Prediction through a Classifier, timed: a whole split in batches (with its throughput) and single texts."""

from __future__ import annotations

import time

import numpy as np

from core.classifier import Classifier

BATCH = 256  # texts per predict_proba call when predicting a whole split


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
