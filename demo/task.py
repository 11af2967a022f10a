"""What the loaded classifiers take and give, read from their runs: one text or a pair of texts (and the columns the
runs read them from), and the kind of answer (`core.kinds`: class probabilities, labels chosen by each label's
threshold, or a value). Every model the page serves is of one `Task`: the same inputs, the same kind.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core import kinds
from core.kinds import Kind
from core.record import RunRecord
from core.tasks import TASKS


@dataclass(frozen=True)
class Task:
    """The inputs and kind of answer of a run.

    Attributes:
        name: the named task, or the train file's name.
        kind: the kind of task (`core.kinds`), which says what the models answer and how the page shows it.
        text_column: the column(s) the first text came from (several joined with " + ").
        pair_column: the column of the second text of a pair task; None for single texts.
        value_range: a regression run's smallest and largest train value, when run.json records it.
    """

    name: str = "your data"
    kind: Kind = field(default_factory=lambda: kinds.get(None))
    text_column: str = "text"
    pair_column: str | None = None
    value_range: tuple[float, float] | None = None

    @property
    def has_pairs(self) -> bool:
        return self.pair_column is not None

    @property
    def signature(self) -> tuple[Kind, bool]:
        """What two runs must share to be served on one page: the kind of answer, and one text or a pair."""
        return self.kind, self.has_pairs

    def describe(self) -> str:
        """The kind in words, e.g. "regression on pairs of texts (sentence1, sentence2)"."""
        if not self.has_pairs:
            return self.kind.title
        return f"{self.kind.title} on pairs of texts ({self.text_column}, {self.pair_column})"


def task_of(record: RunRecord) -> Task:
    """The `Task` of a classification run (docs/formats.md: `data.problem_type`, `data.text_pair_column`,
    `data.value_range`); a run.json without these keys is a single-label run of single texts."""
    data = record.data
    options = data.options
    name = options.get("task") or Path(str(options.get("train_file") or "your data")).name
    pair = data.text_pair_column or options.get("text_pair_column")
    spec = TASKS.get(str(options.get("task")))
    texts = options.get("text_column") or (spec.mirror_columns.text if spec is not None else ["text"])
    value_range = data.value_range
    return Task(
        name=str(name),
        kind=record.kind,
        text_column=" + ".join(map(str, texts)),
        pair_column=str(pair) if pair else None,
        value_range=(float(value_range[0]), float(value_range[1])) if value_range else None,
    )


def page_task(models: dict[str, Any]) -> Task:
    """The task of the models a page serves (`demo.sources.load_models` serves models of one kind only): the first
    one's, or a single-label task of single texts when none is loaded."""
    return task_of(next(iter(models.values())).record) if models else Task()
