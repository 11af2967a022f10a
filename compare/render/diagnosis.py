"""The report's diagnosis sections (one per model, and the self-pretrained models' pretraining) and its table of the
validation score against training time.

They read only results.json (`models.<name>.diagnosis`, `pretraining`, `training_curves`), so the Markdown, the HTML and
the app show the same words; a results.json written before these fields existed gets no section.
"""

from __future__ import annotations

from compare.render.format import score
from compare.render.tables import Table
from compare.scoring import wording

NO_FINDINGS = "No finding qualifies this score: training ended as planned and nothing below says otherwise."


def diagnosis_tables(results: dict) -> list[Table]:
    """A table per model that has a `diagnosis`: each finding's code and what it says to do; then, with self-pretrained
    models, their pretraining (`pretraining_table`)."""
    found = []
    for name, model in results["models"].items():
        if "diagnosis" not in model:
            continue
        rows = [[finding["code"], finding["message"]] for finding in model["diagnosis"]] or [["none", NO_FINDINGS]]
        found.append(Table(f"Diagnosis of {name}", ["finding", "what it means"], rows))
    pretraining = pretraining_table(results)
    return [*found, pretraining] if pretraining else found


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


def pretraining_table(results: dict) -> Table | None:
    """The self-pretrained models' pretraining budgets and where they ended, beside the masked-LM curve."""
    section = results.get("pretraining")
    if not section:
        return None
    rows = []
    for name, model in section.items():
        budget = model.get("budget") or {}
        planned = f"{budget['steps']:,} steps" if budget.get("steps") else f"{budget.get('epochs', 0):g} passes"
        minutes = budget.get("time_budget_minutes")
        ended = {"time": "its time budget", "budget": "its planned passes or steps"}.get(model["stop_reason"], "–")
        rows.append(
            [
                name,
                planned + (f" or {minutes:g} min" if minutes else ""),
                f"{model['steps']:,} ({model['passes']:.2f} passes)" if model.get("passes") else f"{model['steps']:,}",
                f"{model['seconds']:.0f}" if model.get("seconds") is not None else "–",
                ended,
                f"{model['val_loss']:.3f}" if model.get("val_loss") is not None else "–",
                f"{100 * model['val_masked_accuracy']:.1f}" if model.get("val_masked_accuracy") is not None else "–",
            ]
        )
    return Table(
        "Self-pretraining: the masked-LM phase before fine-tuning",
        ["model", "budget", "steps taken", "seconds", "ended by", "validation loss", "masked accuracy %"],
        rows,
        note="Masked language modelling on the run's own training texts, validated on the validation split's texts "
        "(the same masked pieces each time). The diagnosis says pretraining_unfinished when the validation loss was "
        "still falling by more than its noise when the budget ended it.",
    )
