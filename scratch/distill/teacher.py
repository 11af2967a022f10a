"""The teacher of a distilled run: checking that it fits the student's data, and reading its logits.

A teacher is any finished classification run, of either side, read through `core.classifier.load`. It must
have been trained on the same label set and on the same splits (by `data.fingerprints`) as the student, so
that the student learns nothing from a teacher that saw its validation or test examples, and the teacher's
probabilities mean the student's classes. Everything here is checked from `run.json` before the student's run
directory is made.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import numpy as np

from core.classifier import Classifier, predict_in_batches
from core.data import TaskData
from core.rundir import RunError, check_teacher_splits, read_run_json
from core.translator import is_translation_run

logger = logging.getLogger(__name__)

CHUNK = 2048  # texts per call to the teacher, between progress lines


def check_teacher(teacher_dir: str | Path, data: TaskData) -> dict[str, Any]:
    """The teacher's run.json, once it is a finished classification run on `data`'s labels and splits.

    Raises:
        RunError: naming the teacher and, for a mismatch, both label sets or both fingerprints.
    """
    teacher_dir = Path(teacher_dir)
    if is_translation_run(teacher_dir):
        raise RunError(
            f"--teacher {teacher_dir} is a translation run; a teacher must be a classification run on this task."
        )
    try:
        run = read_run_json(teacher_dir)
    except RunError as error:
        raise RunError(f"--teacher: {error}") from None
    theirs = list(run["data"]["labels"])
    if theirs != list(data.labels):
        raise RunError(
            f"--teacher {teacher_dir} was trained on labels {theirs}, but this run's data ({data.source}) has "
            f"labels {list(data.labels)}. Choose a teacher trained on the same task."
        )
    check_teacher_splits(teacher_dir, run["data"]["fingerprints"], data.fingerprints, data.source)
    return run


def teacher_logits(classifier: Classifier, texts: list[str]) -> np.ndarray:
    """The teacher's logits (n, K) for `texts`: the log of its probabilities, which differ from its network's logits
    by a constant per row and so give the same tempered softmax.

    Texts go to the teacher sorted by length, in chunks, so each of its batches holds texts of similar length.
    """
    start, done = time.perf_counter(), 0

    def predict(chunk: list[str]) -> np.ndarray:
        nonlocal done
        probabilities = classifier.predict_proba(chunk)
        done += len(chunk)
        logger.info(
            "Teacher labelled %d/%d texts (%.0f texts/s)", done, len(texts), done / (time.perf_counter() - start)
        )
        return probabilities

    out = predict_in_batches(predict, texts, CHUNK, len(classifier.labels))
    return np.log(np.maximum(out, np.finfo(np.float32).tiny))
