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
from typing import Any

import numpy as np

from core.classifier import Classifier, predict_in_batches
from core.data import TaskData
from core.rundir import RunError, check_teacher_splits, problem_type, read_run_json
from core.tasks import MULTI_LABEL, REGRESSION, SINGLE_LABEL
from core.translator import is_translation_run

logger = logging.getLogger(__name__)

CHUNK = 2048  # inputs per call to the teacher, between progress lines
# What the teacher's outputs become in the transfer set, per kind (run.json `distillation.soft_targets`).
SOFT_TARGETS = {SINGLE_LABEL: "log_probabilities", MULTI_LABEL: "log_odds", REGRESSION: "values"}


def check_teacher(teacher_dir: str | Path, data: TaskData) -> dict[str, Any]:
    """The teacher's run.json, once it is a finished classification run on `data`'s kind, labels and splits.

    Raises:
        RunError: naming the teacher and, for a mismatch, both kinds, both label sets or both fingerprints.
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
    if problem_type(run) != data.problem_type:
        raise RunError(
            f"--teacher {teacher_dir} was trained on a {problem_type(run)} task, but this run's data ({data.source}) "
            f"is {data.problem_type}. Choose a teacher trained on the same task."
        )
    theirs = list(run["data"]["labels"])
    if theirs != list(data.labels):
        raise RunError(
            f"--teacher {teacher_dir} was trained on labels {theirs}, but this run's data ({data.source}) has "
            f"labels {list(data.labels)}. Choose a teacher trained on the same task."
        )
    check_teacher_splits(teacher_dir, run["data"]["fingerprints"], data.fingerprints, data.source)
    return run


def soft_targets(outputs: np.ndarray, problem_type: str) -> np.ndarray:
    """The teacher's outputs as the distillation loss reads them, (n, D): the log of its class probabilities (which
    differ from its network's logits by a constant per row and so give the same tempered softmax), the log-odds of
    its label probabilities (its network's logits), or its values (n, 1)."""
    if problem_type == REGRESSION:
        return np.asarray(outputs, np.float32).reshape(-1, 1)
    tiny = np.finfo(np.float32).tiny
    if problem_type == SINGLE_LABEL:
        return np.log(np.maximum(outputs, tiny))
    # float64: a probability within float32's rounding of 1 keeps its odds
    outputs = np.asarray(outputs, np.float64)
    return (np.log(np.maximum(outputs, tiny)) - np.log(np.maximum(1.0 - outputs, tiny))).astype(np.float32)


def teacher_targets(classifier: Classifier, texts: list[str], text_pairs: list[str] | None = None) -> np.ndarray:
    """The teacher's soft targets (n, D) for `texts` (and the pairs' second texts), in chunks of similar length
    between progress lines."""
    start, done = time.perf_counter(), 0
    regression = classifier.problem_type == REGRESSION

    def predict(rows: list[int]) -> np.ndarray:
        nonlocal done
        inputs = [texts[i] for i in rows], None if text_pairs is None else [text_pairs[i] for i in rows]
        outputs = classifier.predict_values(*inputs) if regression else classifier.predict_proba(*inputs)
        done += len(rows)
        logger.info(
            "Teacher labelled %d/%d inputs (%.0f per second)", done, len(texts), done / (time.perf_counter() - start)
        )
        return outputs

    lengths = [len(text) + (0 if text_pairs is None else len(text_pairs[i])) for i, text in enumerate(texts)]
    outputs = predict_in_batches(predict, list(range(len(texts))), CHUNK, lengths=lengths)
    return soft_targets(outputs, classifier.problem_type)
