"""The clause the verdict sentence carries when findings qualify it, and the verdict that names no winner while the
model behind was still improving.

"finetune beats scratch by 42.9 points" alone hides that one side may not have finished learning;
`verdict_clause` turns the models' findings into the words that follow it. When the model behind stopped while
still improving (`compare.diagnosis.findings.still_improving`: its budget, clock or epoch limit ended it with the
watched validation score at its best and rising by more than the noise), `settle` takes the winner back: the
contest is unsettled, and the verdict says which model stopped early and the `compare run` command that gives it
more room. A winner that was itself still improving changes nothing: more training could only widen its lead.

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

import dataclasses
import shlex
from pathlib import Path

from compare.scoring import wording
from core import sides
from core.args import DataArguments
from core.record import RunRecord


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
        clock = " at its time budget" if evidence.get("stop_reason") == "time" else ""
        if evidence.get("epochs", 2) == 1:
            trained = evidence.get("passes")
            within = "within its first epoch" if not trained or trained <= 1 else f"after {trained:.1f} passes"
            return f"stopped{clock} {within} with nothing to show it had converged"
        gain = wording.size(metric, evidence["gain"], signed=True)
        return f"stopped{clock} while still improving ({gain} in {evidence.get('period', 'its last epoch')})"
    if code == "stopped_by_clock":
        return "was stopped by its time budget"
    if code == "stuck_at_zero":
        return f"scored 0 at every one of its {evidence['validations']} validations"
    if code == "not_learning":
        return "had stopped learning (flat validation score, rising validation loss)"
    if code == "below_baseline":
        return f"is {wording.size(metric, evidence['shortfall'])} below the TF-IDF reference"
    if code == "overfitting":
        return f"was overfitting (validation loss rising over its last {evidence['epochs']} epochs)"
    if code == "unstable_across_seeds":
        return f"varies by {wording.size(metric, evidence['spread'])} across seeds"
    raise ValueError(f"unknown diagnosis code {code!r}; expected one of the codes in compare.diagnosis.findings.CODES")


def _join(phrases: list[str]) -> str:
    return phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " and " + phrases[-1]


def settle(comparison: dict, findings: dict[str, list[dict]], runs: dict[str, RunRecord], output_dir: Path) -> None:
    """Takes the winner back, in place, when the model behind stopped while still improving.

    Sets `comparison["winner"]` to None, `comparison["unsettled"]` to {`behind`, `stop_reason`, `command`} and
    rewrites the verdict: "Unsettled: <a> leads <b> by ..., but <b's phrase> stopped while still improving ...; the
    contest is not settled, because <b>, the model behind, stopped early while still improving. To settle it, give
    <b> more room: <command>". Nothing changes when there is no winner or
    the model behind was not still improving.

    Args:
        comparison: results.json `comparison`, its verdict already carrying the findings' clause.
        findings: model name -> its findings.
        runs: model name -> its run.json, for the command.
        output_dir: the report directory the command writes to again (its finished runs are reused).
    """
    winner = comparison.get("winner")
    if winner is None:
        return
    behind = comparison["b"] if winner == comparison["a"] else comparison["a"]
    found = next((f for f in findings.get(behind, []) if f["code"] == "stopped_while_improving"), None)
    if found is None or behind not in runs:
        return
    command = settling_command(behind, runs[behind], output_dir)
    lead = comparison["verdict"].replace(f"{winner} beats ", f"{winner} leads ", 1).removesuffix(".")
    comparison["winner"] = None
    comparison["unsettled"] = {
        "behind": behind,
        "stop_reason": found["evidence"].get("stop_reason"),
        "command": command,
    }
    comparison["verdict"] = (
        f"Unsettled: {lead}; the contest is not settled, because {behind}, the model behind, stopped early while "
        f"still improving. To settle it, give {behind} more room: {command}"
    )


def settling_command(name: str, run: RunRecord, output_dir: Path) -> str:
    """`python -m compare run <the run's data options> --output-dir DIR --side-args NAME="..."`: the comparison
    again with the model `name` given twice the limit that ended it (its time budget, step budget or epochs; with a
    time budget, twice that too). The other model's finished run is reused."""
    training, hyper = run.training, run.hyperparameters
    minutes = (training.budget or {}).get("time_budget_minutes") or hyper.get("time_budget")
    more = []
    if training.stop_reason == "budget" and training.steps:
        more += ["--max-steps", str(2 * training.steps)]
    elif training.stop_reason == "max_epochs":
        more += ["--epochs", str(2 * (hyper.get("epochs") or training.epochs_run or 1))]
    if minutes:
        more += ["--time-budget", f"{2 * minutes:g}"]
    flags = " ".join(more)
    return " ".join(
        ["python -m compare run", *map(shlex.quote, data_flags(run)), "--output-dir", shlex.quote(str(output_dir))]
        + [f"--side-args {shlex.quote(f'{name}={flags}')}"]
    )


def data_flags(run: RunRecord) -> list[str]:
    """The run's data options that differ from the defaults, as flags (`--task goemotions_ekman`); the data folder
    is left to the environment, as it was found, and a named task's kind to the task."""
    options = run.data.options or {}
    flags = []
    for f in dataclasses.fields(DataArguments):
        value = options.get(f.name, f.default)
        implied = f.name == "problem" and options.get("task")  # a named task has its own kind
        if f.name == "data_dir" or implied or value is None or value == f.default:
            continue
        flag = "--" + f.name.replace("_", "-")
        flags += [flag, *map(str, value)] if isinstance(value, list) else [flag, str(value)]
    return flags
