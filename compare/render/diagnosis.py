"""The report's diagnosis sections (one per model) and its table of the validation score against training time.

Both read only results.json (`models.<name>.diagnosis`, `training_curves`), so the Markdown, the HTML and
the app show the same words; a results.json written before these fields existed gets no section.
"""

from __future__ import annotations

from compare.render.format import score
from compare.render.tables import Table
from compare.scoring import wording

NO_FINDINGS = "No finding qualifies this score: training ended as planned and nothing below says otherwise."


def diagnosis_tables(results: dict) -> list[Table]:
    """A table per model that has a `diagnosis`: each finding's code and what it says to do."""
    found = []
    for name, model in results["models"].items():
        if "diagnosis" not in model:
            continue
        rows = [[finding["code"], finding["message"]] for finding in model["diagnosis"]] or [["none", NO_FINDINGS]]
        found.append(Table(f"Diagnosis of {name}", ["finding", "what it means"], rows))
    return found


def training_curve_table(results: dict) -> Table | None:
    """The validation score after each epoch (`val_accuracy`, or the task's headline) against cumulative training
    seconds, and the equal-time sentence."""
    section = results.get("training_curves")
    if not section:
        return None
    key = section.get("metric", "val_accuracy")
    metric = key.removeprefix("val_")
    rows = [
        [name, str(point["epoch"]), f"{point['seconds']:.1f}", score(metric, point[key])]
        for name, curve in section["curves"].items()
        for point in curve
    ]
    header = f"validation {wording.name(metric)}" + (" %" if wording.is_fraction(metric) else "")
    return Table(
        f"Validation {wording.name(metric)} against training time",
        ["model", "epoch", "cumulative training seconds", header],
        rows or [["–", "–", "–", "no run recorded a training history"]],
        note=section["equal_time"],
    )
