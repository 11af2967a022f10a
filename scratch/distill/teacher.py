"""The teacher of a distilled run: checking that it fits the student's data, and reading its soft targets.

A teacher is any finished classification run, of either side, read through `core.classifier.load`. It must
have been trained on the same kind of problem, the same label set and the same splits (by `data.fingerprints`) as
the student, so that the student learns nothing from a teacher that saw its validation or test examples, and the
teacher's outputs mean the student's. Everything here is checked from `run.json` before the student's run directory
is made.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np

from core.classifier import Classifier, predict_in_batches
from core.data import TaskData
from core.record import RunRecord, read_run
from core.rundir import RunError, check_teacher_splits
from core.translator import is_translation_run
from scratch.distill.kinds import distilled

logger = logging.getLogger(__name__)

CHUNK = 2048  # inputs per call to the teacher, between progress lines


def check_teacher(teacher_dir: str | Path, data: TaskData) -> RunRecord:
    """The teacher's record, once it is a finished classification run on `data`'s kind, labels and splits.

    Raises:
        RunError: naming the teacher and, for a mismatch, both kinds, both label sets or both fingerprints.
    """
    teacher_dir = Path(teacher_dir)
    if is_translation_run(teacher_dir):
        raise RunError(
            f"--teacher {teacher_dir} is a translation run; a teacher must be a classification run on this task."
        )
    try:
        record = read_run(teacher_dir)
    except RunError as error:
        raise RunError(f"--teacher: {error}") from None
    if record.kind != data.kind:
        raise RunError(
            f"--teacher {teacher_dir} was trained on a {record.kind.name} task, but this run's data ({data.source}) "
            f"is {data.kind.name}. Choose a teacher trained on the same task."
        )
    theirs = record.labels
    if theirs != list(data.labels):
        raise RunError(
            f"--teacher {teacher_dir} was trained on labels {theirs}, but this run's data ({data.source}) has "
            f"labels {list(data.labels)}. Choose a teacher trained on the same task."
        )
    check_teacher_splits(teacher_dir, record.data.fingerprints, data.fingerprints, data.source)
    return record


def teacher_targets(classifier: Classifier, texts: list[str], text_pairs: list[str] | None = None) -> np.ndarray:
    """The teacher's soft targets (n, D) for `texts` (and the pairs' second texts), what its kind makes of its outputs
    (`scratch.distill.kinds`), in chunks of similar length between progress lines."""
    start, done = time.perf_counter(), 0
    kind = classifier.kind

    def predict(rows: list[int]) -> np.ndarray:
        nonlocal done
        inputs = [texts[i] for i in rows], None if text_pairs is None else [text_pairs[i] for i in rows]
        outputs = classifier.predict_values(*inputs) if kind.gives_values else classifier.predict_proba(*inputs)
        done += len(rows)
        logger.info(
            "Teacher labelled %d/%d inputs (%.0f per second)", done, len(texts), done / (time.perf_counter() - start)
        )
        return outputs

    lengths = [len(text) + (0 if text_pairs is None else len(text_pairs[i])) for i, text in enumerate(texts)]
    outputs = predict_in_batches(predict, list(range(len(texts))), CHUNK, lengths=lengths)
    return distilled(kind).soft_targets(outputs)
