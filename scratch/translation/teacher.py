"""Sequence-level knowledge distillation (Kim and Rush 2016): the student trains on a teacher's translations of
the train sources instead of the train split's own targets.

A teacher is `bergamot` (the offline production model of `core.bergamot`, for pt -> en data only) or a finished
translation run directory trained on the same splits as the student (by `data.fingerprints`), read through
`core.translator.load` and decoded with `--teacher-beam`. Both are checked before the student's run directory is
made. The teacher translates the train sources once; the translations, each run of whitespace made one space, go
to the run directory's `teacher.tsv` (source TAB translation, no quoting, written to `.part` first), the time
the teacher took to `teacher.json`, and both are read back on `--resume`. Pairs whose translation is empty are dropped and counted. Validation and test keep their own
references.
"""

from __future__ import annotations

import csv
import json
import logging
import os
import time
from pathlib import Path
from typing import Any

import pandas as pd

from core import bergamot
from core.pairs import PairData, PairDataArguments, language_pair
from core.rundir import RunError, check_teacher_splits, write_json
from core.translator import load, read_translation_run

logger = logging.getLogger(__name__)

TEACHER_FILE = "teacher.tsv"
TEACHER_TIME_FILE = "teacher.json"
COLUMNS = ("source", "translation")


def check_teacher(teacher: str, beam: int, data: PairData, data_args: PairDataArguments) -> dict[str, Any]:
    """What run.json records of the teacher (`distillation` without the counts), once it can teach `data`.

    Raises:
        RunError: naming the teacher and what keeps it from teaching this data.
    """
    if teacher == bergamot.NAME:
        otherwise = "otherwise give a translation run directory as --teacher."
        bergamot.check_can_teach(language_pair(data_args.to_dict()), f"--teacher {bergamot.NAME}", otherwise)
        description = f"{bergamot.DESCRIPTION} {bergamot.version()}"
        return {"kind": "sequence-level", "teacher": bergamot.NAME, "description": description, "beam": None}
    try:
        record = read_translation_run(teacher)
    except RunError as error:
        raise RunError(f"--teacher: {error} Give a finished translation run directory or {bergamot.NAME}.") from None
    check_teacher_splits(teacher, record.data.fingerprints, data.fingerprints, data.source)
    if beam > 1 and record.model.arch != "encoder-decoder":
        raise RunError(
            f"--teacher {teacher} is a {record.model.arch} run, which decodes greedily only; pass --teacher-beam 1."
        )
    return {
        "kind": "sequence-level",
        "teacher": str(Path(teacher).resolve()),
        "description": f"{record.model.name} ({Path(teacher).name})",
        "teacher_created": record.created,
        "teacher_validation": {"bleu": record.validation["bleu"], "chrf": record.validation["chrf"]},
        "beam": beam,
    }


def teacher_targets(
    teacher: str, beam: int, sources: list[str], partial: Path
) -> tuple[list[str], list[str], dict[str, Any]]:
    """The train pairs the student learns from: (sources, the teacher's translations, counts for run.json).

    Reads `partial/teacher.tsv` when it holds translations of exactly these sources (a resumed run), else has
    the teacher translate them and writes it.
    """
    path = partial / TEACHER_FILE
    translations, seconds = _read_cached(path, sources), _read_seconds(partial / TEACHER_TIME_FILE)
    if translations is None:
        started = time.perf_counter()
        # One line per pair in the cache, so a resumed run trains on the very targets this one does.
        translations = [" ".join(text.split()) for text in _translate(teacher, beam, sources)]
        seconds = time.perf_counter() - started
        logger.info("Teacher %s translated %d train sources in %.0f s", teacher, len(sources), seconds)
        _write(path, sources, translations)
        write_json(partial / TEACHER_TIME_FILE, {"seconds": round(seconds, 3)})
    kept = [i for i, text in enumerate(translations) if text.strip()]
    if not kept:
        raise RunError(f"--teacher {teacher} gave an empty translation of every train source; see {path}.")
    if len(kept) < len(sources):
        logger.warning("Dropped %d train pairs whose teacher translation is empty", len(sources) - len(kept))
    counts = {"pairs": len(kept), "dropped_empty": len(sources) - len(kept), "seconds": seconds, "file": TEACHER_FILE}
    return [sources[i] for i in kept], [translations[i] for i in kept], counts


def _translate(teacher: str, beam: int, sources: list[str]) -> list[str]:
    def progress(done: int) -> None:
        logger.info("Teacher translated %d/%d train sources", done, len(sources))

    if teacher == bergamot.NAME:
        return bergamot.translate_each(sources, progress=progress)[0]
    translator = load(teacher)
    out = []
    for start in range(0, len(sources), 1024):
        out += translator.translate(sources[start : start + 1024], beam=beam)
        progress(len(out))
    return out


def _write(path: Path, sources: list[str], translations: list[str]) -> None:
    # One line per pair: tabs and line breaks inside a source become spaces (translations come normalised).
    frame = pd.DataFrame(dict(zip(COLUMNS, ([" ".join(s.split()) for s in sources], translations))))
    part = path.with_name(path.name + ".part")
    frame.to_csv(part, sep="\t", index=False, quoting=csv.QUOTE_NONE, encoding="utf-8")
    os.replace(part, path)


def _read_seconds(path: Path) -> float | None:
    try:
        seconds = json.loads(path.read_text(encoding="utf-8"))["seconds"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return float(seconds) if isinstance(seconds, int | float) else None


def _read_cached(path: Path, sources: list[str]) -> list[str] | None:
    if not path.is_file():
        return None
    frame = pd.read_csv(path, sep="\t", quoting=csv.QUOTE_NONE, dtype=object, keep_default_na=False, encoding="utf-8")
    if list(frame.columns) != list(COLUMNS) or frame["source"].tolist() != [" ".join(s.split()) for s in sources]:
        logger.warning("%s does not hold translations of this run's train sources; translating them again", path)
        return None
    logger.info("Read the teacher's translations of %d train sources from %s", len(frame), path)
    return frame["translation"].tolist()
