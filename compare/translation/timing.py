"""What a translation run costs to use: sentences per second greedy and by beam search, single-sentence latency."""

from __future__ import annotations

import time

import numpy as np

from core.translator import Translator

BATCH = 64  # sentences per translate call when translating a whole split


def translate_timed(
    translator: Translator, sources: list[str], beam: int, beam_sentences: int, latency_samples: int
) -> tuple[list[str], dict]:
    """The greedy translation of every source, and the run's speed.

    Returns:
        (translations in order, {throughput_per_s, beam, beam_throughput_per_s, latency_p50_ms, latency_p95_ms});
        `beam_throughput_per_s` is None for a decoder-only run (greedy only) or `beam` 1.
    """
    translator.translate(sources[:8])  # traces and warms the graph outside the timing
    started = time.perf_counter()
    outputs = translator.translate(sources, batch_size=BATCH)
    throughput = len(sources) / max(time.perf_counter() - started, 1e-9)
    beam_throughput = None
    if beam > 1 and translator.run["model"]["arch"] == "encoder-decoder":
        subset = sources[: max(1, beam_sentences)]
        translator.translate(subset[:4], beam=beam)
        started = time.perf_counter()
        translator.translate(subset, beam=beam, batch_size=BATCH)
        beam_throughput = len(subset) / max(time.perf_counter() - started, 1e-9)
    times = []
    picked = np.linspace(0, len(sources) - 1, latency_samples).round().astype(int)  # spread over the split
    for text in (sources[i] for i in picked):
        started = time.perf_counter()
        translator.translate([text])
        times.append((time.perf_counter() - started) * 1000)
    return outputs, {
        "throughput_per_s": throughput,
        "beam": beam,
        "beam_throughput_per_s": beam_throughput,
        "latency_p50_ms": float(np.percentile(times, 50)),
        "latency_p95_ms": float(np.percentile(times, 95)),
    }
