"""Loads a finished translation run into a `Translator`, through its `saved_model/` alone (no side's code).

A translation run's `run.json` has `task_kind: "translation"` and `validation` {`bleu`, `chrf`} on sacrebleu's
0-100 scale; its `saved_model/` exposes `translate`, `translate_beam`, `translate_nbest` and `attention` (see
docs/formats.md).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from core.console import native_notices_silenced, quiet_library_import
from core.mbr import consensus
from core.record import RunRecord, read_run, recorded_task
from core.rundir import SAVED_MODEL_DIR, RunError
from core.task_kinds import TRANSLATION

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

# The decoding the translation report and the app's Translate tab use unless told otherwise: beam 4 scored best of
# greedy, beam 4 and beam 4 with minimum-Bayes-risk selection on pt_en (docs/results.md, "Decoding: greedy, beam
# search and MBR").
DEFAULT_BEAM = 4
DEFAULT_MBR = False


def is_translation_run(run_dir: str | Path) -> bool:
    """Whether `run_dir/run.json` records a translation run; False when it is absent or unreadable (loading the
    run then says what is wrong with it)."""
    return recorded_task(run_dir) is TRANSLATION


def read_translation_run(run_dir: str | Path) -> RunRecord:
    """Reads and validates `run_dir/run.json` of a translation run (its schema: `core.record`)."""
    return read_run(run_dir, TRANSLATION)


class Translator:
    """A trained translation model behind strings in, strings out.

    Attributes:
        name: the run directory's name.
        side: `run.json`'s side.
        record: the run's record.
    """

    def __init__(self, run_dir: str | Path, record: RunRecord | None = None):
        import tensorflow as tf
        import tensorflow_text  # noqa: F401 - registers the SentencePiece ops the saved model uses

        self.path = Path(run_dir)
        self.record = read_translation_run(self.path) if record is None else record
        self.name = self.path.name
        self.side = self.record.side
        saved = self.path / SAVED_MODEL_DIR
        if not saved.is_dir():
            raise RunError(f"{self.path} has no {SAVED_MODEL_DIR}/; the run is incomplete, train it again.")
        self._tf = tf
        with native_notices_silenced():  # its SentencePiece model loads here, logging at INFO
            self._module = tf.saved_model.load(str(saved))

    def translate(self, texts: list[str], beam: int = 1, batch_size: int = 64, mbr: bool = False) -> list[str]:
        """Translations of `texts`, greedy (`beam=1`) or by beam search, in the order given; with `mbr`, each is
        the one of the beam's finished hypotheses the others agree with most by chrF++ (`core.mbr`)."""
        check_decoding(beam, mbr)
        if beam > 1 and self.record.model.arch != "encoder-decoder":
            raise ValueError(f"{self.name} is a {self.record.model.arch} model; beam search needs encoder-decoder.")
        if mbr and not hasattr(self._module, "translate_nbest"):
            raise RunError(
                f"{self.path / SAVED_MODEL_DIR} has no translate_nbest function: it was exported before minimum-Bayes-"
                "risk selection existed. Translate it without --mbr, or train the run again."
            )
        return translate_batches(self._module, texts, beam, batch_size, mbr)

    def attention(self, text: str) -> tuple[list[str], list[str], np.ndarray]:
        """One sentence's source pieces, output pieces and cross-attention (layers, heads, target, source)."""
        if self.record.model.arch != "encoder-decoder":
            raise ValueError(f"{self.name} is a {self.record.model.arch} model; it has no cross-attention.")
        result = self._module.attention(self._tf.constant(text, self._tf.string))
        pieces = lambda key: [p.decode("utf-8") for p in result[key].numpy()]  # noqa: E731
        return pieces("source_tokens"), pieces("target_tokens"), result["weights"].numpy()


def check_decoding(beam: int, mbr: bool) -> None:
    """Refuses a beam width below 1, and minimum-Bayes-risk selection without hypotheses to choose among."""
    if beam < 1:
        raise ValueError(f"beam must be at least 1 (1 is greedy decoding), got {beam}.")
    if mbr and beam < 2:
        raise ValueError(f"--mbr chooses among a beam search's hypotheses: give a beam of 2 or more, got {beam}.")


def describe_decoding(beam: int, mbr: bool) -> str:
    """`greedy`, `beam 4` or `beam 4 + MBR`: how translations were made, as reports print it."""
    return "greedy" if beam == 1 else f"beam {beam}" + (" + MBR" if mbr else "")


def translate_batches(
    module: Any, texts: list[str], beam: int = 1, batch_size: int = 64, mbr: bool = False
) -> list[str]:
    """Translations of `texts` in order through `module`'s `translate` (greedy), `translate_beam` or, with `mbr`,
    `translate_nbest` and `core.mbr.consensus`: the export's functions (a loaded `saved_model/` or the training's
    live module), decoded in batches of similar length."""
    import tensorflow as tf

    check_decoding(beam, mbr)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out: list[str] = [""] * len(texts)
    width = tf.constant(beam, tf.int32)
    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        batch = tf.constant([texts[i] for i in rows], tf.string)
        if mbr:
            found = module.translate_nbest(batch, width)
            for i, candidates, scores in zip(rows, found["translations"].numpy(), found["scores"].numpy()):
                kept = [c.decode("utf-8") for c, score in zip(candidates, scores) if np.isfinite(score)]
                out[i] = kept[consensus(kept)]
            continue
        result = module.translate(batch) if beam == 1 else module.translate_beam(batch, width)
        for i, text in zip(rows, result.numpy()):
            out[i] = text.decode("utf-8")
    return out


def load(run_dir: str | Path, record: RunRecord | None = None) -> Translator:
    """The `Translator` of a finished translation run (its record read here unless given)."""
    quiet_library_import()
    return Translator(run_dir, record)
