"""The metrics the suite scores with, as local Hugging Face `evaluate` modules loaded by path.

`evaluate.load("accuracy")` fetches the metric script from the hub, which fails offline, so each metric
lives here as its own module (typed features in `_info`, results from `_compute`, doctested examples) and
`load_metric` hands `evaluate.load` the file path.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path

import datasets
import evaluate

METRICS_DIR = Path(__file__).resolve().parent
METRICS = (
    "accuracy",
    "precision_recall_f1",
    "matthews_correlation",
    "mcnemar",
    "multilabel",
    "regression",
    "sacrebleu_bleu",
    "sacrebleu_chrf",
)


@cache
def load_metric(name: str) -> evaluate.EvaluationModule:
    """Loads the local metric module `name` (one of METRICS) through `evaluate.load`, kept in memory."""
    if name not in METRICS:
        raise ValueError(f"Unknown metric {name!r}; the suite ships {', '.join(METRICS)}.")
    return evaluate.load(str(METRICS_DIR / f"{name}.py"), keep_in_memory=True)


def label_id_info(
    description: str, inputs_description: str, columns: Sequence[str] = ("predictions", "references")
) -> evaluate.MetricInfo:
    """The `_info` of a metric over label ids: one int64 feature per input column."""
    return evaluate.MetricInfo(
        description=description,
        citation="",
        inputs_description=inputs_description,
        features=datasets.Features({column: datasets.Value("int64") for column in columns}),
    )
