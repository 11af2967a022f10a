"""Parts of a run record for tests of code that reads only a few of its fields: `partial({"training": {...}})` reads
by attribute as a `core.record.RunRecord` does (`record.training.history`), a field the test leaves out being None
(an empty dict for `hyperparameters`)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any


class Section(SimpleNamespace):
    def __getattr__(self, name: str) -> Any:  # only called for a field the test left out
        return {} if name == "hyperparameters" else None


def partial(run: dict) -> Section:
    """The run.json sections in `run` as attributes; `labels` and `train_rows` as RunRecord gives them."""
    sections = {key: Section(**value) if isinstance(value, dict) and key != "hyperparameters" else value
                for key, value in run.items()}  # fmt: skip
    record = Section(**sections)
    if "data" in sections:
        record.labels = list(getattr(sections["data"], "labels", None) or [])
        record.train_rows = int((getattr(sections["data"], "splits", None) or {}).get("train", 0))
    return record
