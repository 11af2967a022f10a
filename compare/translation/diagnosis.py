"""Findings that qualify a translation model's score, and the clause they add to a verdict.

"bergamot beats scratch by 40 BLEU" alone hides that the from-scratch model may not have finished learning:
a run whose budget ended while its validation chrF++ still rose (by at least `MIN_LAST_EPOCH_GAIN`, to its best
value) is marked `stopped_while_improving`, by the rule classification uses (`compare.diagnosis.findings`), with
the gain in chrF++ points.

Examples:
    >>> from types import SimpleNamespace as record
    >>> run = record(training=record(stop_reason="budget", history=[{"val_chrf": 20.0}, {"val_chrf": 23.5}]))
    >>> [f["code"] for f in diagnose(run)]
    ['stopped_while_improving']
    >>> verdict_clause({"scratch": diagnose(run)})
    ', but scratch stopped while still improving (+3.5 chrF++ in its last epoch)'
    >>> diagnose(record(training=record(stop_reason="early_stopping", history=[{"val_chrf": 20.0}, {"val_chrf": 19.0}])))
    []
"""

from __future__ import annotations

from typing import Any

from compare.diagnosis.findings import rising_gain

MIN_LAST_EPOCH_GAIN = 0.2  # chrF++ points


def diagnose(record: Any) -> list[dict]:
    """The findings of one translation run (`core.record.RunRecord`), from its run.json `training`."""
    training = record.training
    history = [epoch for epoch in training.history or [] if epoch.get("val_chrf") is not None]
    if training.stop_reason not in ("budget", "max_epochs"):
        return []
    gain = rising_gain([epoch["val_chrf"] for epoch in history], MIN_LAST_EPOCH_GAIN)
    if gain is None:
        return []
    limit = "step budget" if training.stop_reason == "budget" else "epoch limit"
    return [
        {
            "code": "stopped_while_improving",
            "message": f"Training ended at its {limit} while validation chrF++ still rose ({gain:+.1f} in the last "
            "epoch); a longer budget (--profile full, or --scratch-args '--epochs N') may score higher.",
            "evidence": {"gain": gain, "val_chrf": history[-1]["val_chrf"], "epochs": len(history),
                         "stop_reason": training.stop_reason},
        }
    ]  # fmt: skip


def verdict_clause(findings: dict[str, list[dict]]) -> str:
    """ ", but <model> stopped while still improving (...)", or "" when no model has findings."""
    parts = [
        f"{name} stopped while still improving ({f['evidence']['gain']:+.1f} chrF++ in its last epoch)"
        for name, found in findings.items()
        for f in found
        if f["code"] == "stopped_while_improving"
    ]
    return f", but {' and '.join(parts)}" if parts else ""
