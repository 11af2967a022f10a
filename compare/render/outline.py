"""The report's outline after its title and verdict, written once and rendered to HTML (`compare.render.html`) and
Markdown (`compare.render.markdown`): the headline, each model's diagnosis, the difference, distillation, the seeds,
the cost, the validation score against training time (table, then figure), tuning (with `--tune`), the figures,
attribution faithfulness, per-class (or per-label) scores, the examples the models get wrong and the trust checks.
"""

from __future__ import annotations

from typing import Protocol

from compare.diagnosis.training_curves_figure import FILENAME as TRAINING_CURVES
from compare.render import tables
from compare.render.diagnosis import diagnosis_tables, training_curve_table
from compare.render.distillation import distillation_tables
from compare.render.tables import Table
from compare.render.trust import trust_tables
from compare.render.tuning import tuning_tables


class Renderer(Protocol):
    """What a format writes for each part of the outline, as the pieces of its document."""

    def table(self, table: Table) -> list[str]: ...

    def figure(self, name: str) -> list[str]:
        """One figure by its file name, where the report has it; nothing where it has not."""
        ...

    def figures(self, skip: str) -> list[str]:
        """The report's figures, but `skip`, placed on its own."""
        ...

    def faithfulness(self, results: dict) -> list[str]: ...


def outline(results: dict, analysis: dict, render: Renderer) -> list[str]:
    """The report's body after its verdict, as `render` writes each part, in order."""
    found = [
        tables.headline(results),
        *diagnosis_tables(results),
        tables.difference(results),
        *distillation_tables(results),
        tables.seeds(results),
        tables.cost(results),
        training_curve_table(results),
    ]
    parts = [part for table in found if table for part in render.table(table)]
    parts += render.figure(TRAINING_CURVES)
    parts += [part for table in tuning_tables(results) for part in render.table(table)]
    parts += render.figures(skip=TRAINING_CURVES)
    parts += render.faithfulness(results)
    last = [tables.per_class(results), *tables.error_tables(results, analysis), *trust_tables(results)]
    return parts + [part for table in last if table for part in render.table(table)]
