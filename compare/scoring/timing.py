"""Prediction through a Classifier, timed: a whole split in batches (with its throughput) and single inputs.

An input is a text, or for a pair task a text and its second text; what a model answers is its probabilities
(`predict_proba`: (n, K) classes or (n, L) independent labels) or, for regression, its values (`predict_values`,
(n,)), as the `Classifier` protocol gives them (docs/formats.md).
"""

from __future__ import annotations

import time

import numpy as np

from core.classifier import Classifier

BATCH = 256  # inputs per call when predicting a whole split


def outputs(model: Classifier, texts: list[str], pairs: list[str] | None = None) -> np.ndarray:
    """The model's probabilities for these inputs, or its values where its kind gives values."""
    given = (texts,) if pairs is None else (texts, pairs)
    return model.predict_values(*given) if model.kind.gives_values else model.predict_proba(*given)


def predict_split(model: Classifier, texts: list[str], pairs: list[str] | None = None) -> tuple[np.ndarray, float]:
    """The model's outputs for every input, in batches, and the batched throughput in inputs per second.

    One small call first warms up (graph tracing, first allocations) so it does not count as throughput.
    """
    warm = min(8, len(texts))
    outputs(model, texts[:warm], None if pairs is None else pairs[:warm])
    start = time.perf_counter()
    found = [
        outputs(model, texts[i : i + BATCH], None if pairs is None else pairs[i : i + BATCH])
        for i in range(0, len(texts), BATCH)
    ]
    seconds = time.perf_counter() - start
    found = np.concatenate(found)
    expected = (len(texts), *model.kind.empty_outputs(len(model.labels)).shape[1:])
    if found.shape != expected:
        what = model.kind.outputs
        raise ValueError(f"{model.name} returned {what} of shape {found.shape}, expected {expected}.")
    return found.astype(np.float64), len(texts) / max(seconds, 1e-9)


def single_text_latency(model: Classifier, texts: list[str], samples: int, pairs: list[str] | None = None) -> dict:
    """Median and 95th-percentile milliseconds of predicting one input per call, over `samples` inputs."""
    picked = [i % len(texts) for i in range(samples)]

    def one(i: int) -> None:
        outputs(model, [texts[i]], None if pairs is None else [pairs[i]])

    one(picked[0])
    times = []
    for i in picked:
        start = time.perf_counter()
        one(i)
        times.append((time.perf_counter() - start) * 1000)
    return {"latency_p50_ms": float(np.percentile(times, 50)), "latency_p95_ms": float(np.percentile(times, 95))}
