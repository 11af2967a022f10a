"""results.json `pretraining`: each self-pretrained model's masked-LM curve beside its pretraining budget (the report
draws it: `compare.render.figures.pretraining_curves`, `compare.render.diagnosis.pretraining_table`).

A self-pretrained model is compared after its masked-LM phase; whether that phase had learned the objective when its
budget ended it is the finding `pretraining_unfinished` (`compare.diagnosis.findings`). This section shows the curve
the finding reads: the masked-LM loss and masked accuracy on the validation texts against optimizer steps, with what
the budget was (passes over the pretraining texts, minutes) and what ended it.

Examples:
    >>> from types import SimpleNamespace as record
    >>> rows = [{"steps": 200, "loss": 6.1, "masked_accuracy": 0.05, "val_loss": 6.0, "val_masked_accuracy": 0.06},
    ...         {"steps": 400, "loss": 5.2, "masked_accuracy": 0.11, "val_loss": 5.3, "val_masked_accuracy": 0.12}]
    >>> run = record(pretraining=record(history=rows, steps=400, passes=1.6, seconds=80.0, stop_reason="time",
    ...     budget={"epochs": 3.0, "steps": None, "time_budget_minutes": 4}, texts=6000))
    >>> section = pretraining_section({"scratch-pretrained": run, "scratch": record(pretraining=None)})
    >>> list(section), section["scratch-pretrained"]["val_masked_accuracy"], section["scratch-pretrained"]["curve"][1]
    (['scratch-pretrained'], 0.12, {'steps': 400, 'loss': 5.2, 'val_loss': 5.3, 'val_masked_accuracy': 0.12})
"""

from __future__ import annotations

from typing import Any

CURVE_KEYS = ("steps", "loss", "val_loss", "val_masked_accuracy")


def pretraining_section(runs: dict[str, Any]) -> dict[str, dict]:
    """Per self-pretrained model (a run with run.json `pretraining`): its `curve` (each logged period's `steps`,
    training `loss`, `val_loss` and `val_masked_accuracy`), `steps`, `passes`, `seconds`, `stop_reason`, `budget`,
    `texts` and the last validation's `val_loss` and `val_masked_accuracy` (None for a run that logged none)."""
    section = {}
    for name, run in runs.items():
        pretraining = getattr(run, "pretraining", None)
        if pretraining is None:
            continue
        curve = [{key: row[key] for key in CURVE_KEYS if key in row} for row in pretraining.history]
        last = pretraining.history[-1] if pretraining.history else {}
        section[name] = {
            "curve": curve,
            "steps": pretraining.steps,
            "passes": pretraining.passes,
            "seconds": pretraining.seconds,
            "stop_reason": pretraining.stop_reason,
            "budget": pretraining.budget,
            "texts": pretraining.texts,
            "val_loss": last.get("val_loss"),
            "val_masked_accuracy": last.get("val_masked_accuracy"),
        }
    return section
