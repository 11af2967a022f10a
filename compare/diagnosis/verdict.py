"""The clause the verdict sentence carries when findings qualify it.

"finetune beats scratch by 42.9 points" alone hides that one side may not have finished learning;
`verdict_clause` turns the models' findings into the words that follow it.

Examples:
    >>> findings = {"scratch": [
    ...     {"code": "stopped_while_improving", "evidence": {"gain": 0.031, "epochs": 3}},
    ...     {"code": "below_baseline", "evidence": {"shortfall": 0.12}}]}
    >>> verdict_clause(findings)
    ', but the from-scratch model stopped while still improving (+3.1 points in its last epoch) and is 12.0 points below the TF-IDF reference'
    >>> verdict_clause({"finetune": [], "scratch": []})
    ''
"""

from __future__ import annotations

from compare.scoring import wording
from core import sides


def verdict_clause(findings: dict[str, list[dict]], descriptions: dict[str, str] | None = None) -> str:
    """ ", but <model> <phrase> and <phrase>; <model> <phrase>", or "" when no model has findings.

    Args:
        findings: model name -> its findings (`diagnose`'s output, results.json `models.<name>.diagnosis`).
        descriptions: model name -> how the sentence names it; defaults to the side's phrase (`core.sides`) for a
            side's name, else the name.
    """
    names = {**{side.name: side.phrase for side in sides.SIDES.values()}, **(descriptions or {})}
    parts = []
    for model, model_findings in findings.items():
        phrases = [finding_phrase(finding) for finding in model_findings]
        if phrases:
            parts.append(f"{names.get(model, model)} {_join(phrases)}")
    return f", but {'; '.join(parts)}" if parts else ""


def finding_phrase(finding: dict) -> str:
    """A few words for one finding, to follow the model's name ("is 3.1 points below the TF-IDF reference"); the
    evidence's `metric` (accuracy when absent) says whether its figures are points of a fraction."""
    code, evidence = finding["code"], finding.get("evidence", {})
    metric = evidence.get("metric", "accuracy")
    if code == "stopped_while_improving":
        if evidence.get("epochs", 2) == 1:
            return "stopped within its first epoch with nothing to show it had converged"
        gain = wording.size(metric, evidence["gain"], signed=True)
        return f"stopped while still improving ({gain} in {evidence.get('period', 'its last epoch')})"
    if code == "below_baseline":
        return f"is {wording.size(metric, evidence['shortfall'])} below the TF-IDF reference"
    if code == "overfitting":
        return f"was overfitting (validation loss rising over its last {evidence['epochs']} epochs)"
    if code == "unstable_across_seeds":
        return f"varies by {wording.size(metric, evidence['spread'])} across seeds"
    raise ValueError(f"unknown diagnosis code {code!r}; expected one of the codes in compare.diagnosis.findings.CODES")


def _join(phrases: list[str]) -> str:
    return phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " and " + phrases[-1]
