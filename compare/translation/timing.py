"""What a translation run costs to use: its translations with the report's decoding, sentences per second greedy
and with that decoding, single-sentence latency."""

from __future__ import annotations

import time

import numpy as np

from core.translator import Translator, describe_decoding

BATCH = 64  # sentences per translate call when translating a whole split


def translate_timed(
    translator: Translator, sources: list[str], beam: int, mbr: bool, latency_samples: int
) -> tuple[list[str], dict]:
    """The translation of every source by beam search of width `beam` (with `mbr`, then minimum-Bayes-risk
    selection), or greedily for `beam` 1 and for a decoder-only run; and the run's speed.

    Returns:
        (translations in order, {decoding, throughput_per_s, beam, mbr, beam_throughput_per_s, latency_p50_ms,
        latency_p95_ms}): `throughput_per_s` greedy, `beam_throughput_per_s` that of the beam decoding (None
        when the run decoded greedily), both over the whole split; the latency of one sentence, greedy.
    """
    if beam > 1 and translator.record.model.arch != "encoder-decoder":
        beam, mbr = 1, False  # beam search needs the encoder-decoder
    mbr = mbr and beam > 1
    translator.translate(sources[:8])  # traces and warms the graph outside the timing
    started = time.perf_counter()
    outputs = translator.translate(sources, batch_size=BATCH)
    throughput = len(sources) / max(time.perf_counter() - started, 1e-9)
    beam_throughput = None
    if beam > 1:
        translator.translate(sources[:4], beam=beam, mbr=mbr)
        started = time.perf_counter()
        outputs = translator.translate(sources, beam=beam, batch_size=BATCH, mbr=mbr)
        beam_throughput = len(sources) / max(time.perf_counter() - started, 1e-9)
    times = []
    picked = np.linspace(0, len(sources) - 1, latency_samples).round().astype(int)  # spread over the split
    for text in (sources[i] for i in picked):
        started = time.perf_counter()
        translator.translate([text])
        times.append((time.perf_counter() - started) * 1000)
    return outputs, {
        "decoding": describe_decoding(beam, mbr),
        "throughput_per_s": throughput,
        "beam": beam if beam > 1 else None,
        "mbr": mbr,
        "beam_throughput_per_s": beam_throughput,
        "latency_p50_ms": float(np.percentile(times, 50)),
        "latency_p95_ms": float(np.percentile(times, 95)),
    }
