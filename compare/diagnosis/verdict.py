"""The clause the verdict sentence carries when findings qualify it, and the verdict that names no winner while a
model had not finished learning.

"finetune beats scratch by 42.9 points" alone hides that one side may not have finished learning;
`verdict_clause` turns the models' findings into the words that follow it. When the model behind had not finished
(`compare.diagnosis.findings.still_improving`: its budget, clock or epoch limit ended it with the watched validation
score at its best and rising by more than the noise; or its masked-LM pretraining stopped while the loss was still
falling), or when there is no winner and either model had not, `settle` calls the contest unsettled: the verdict says
which model stopped early and the `compare run` command that gives it more room. "No clear winner" is kept for two
finished models. A winner that was itself still improving changes nothing: more training could only widen its lead.

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
    if code == "pretraining_unfinished":
        drop = evidence["drop"]
        return f"stopped pretraining while its masked-LM loss was still falling ({-drop:+.3f} in its last {evidence['period']} steps)"
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
    if code == "long_texts_cut":
        return f"read only the head of the {evidence['longer']:.0%} of texts longer than its window"
    if code == "unstable_across_seeds":
        return f"varies by {wording.size(metric, evidence['spread'])} across seeds"
    raise ValueError(f"unknown diagnosis code {code!r}; expected one of the codes in compare.diagnosis.findings.CODES")


def _join(phrases: list[str]) -> str:
    return phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " and " + phrases[-1]


# The findings that say a model had not finished learning when its budget ended it: a contest with such a model
# is unsettled, whatever the interval says, until it has had the room the command gives it.
UNFINISHED = ("stopped_while_improving", "pretraining_unfinished")


def unfinished(model_findings: list[dict]) -> dict | None:
    """The first of a model's findings that says it had not finished learning, or None."""
    return next((f for f in model_findings if f["code"] in UNFINISHED), None)


def settle(comparison: dict, findings: dict[str, list[dict]], runs: dict[str, RunRecord], output_dir: Path) -> None:
    """Calls a contest with an unfinished model unsettled, in place: with a winner, when the model behind had not
    finished learning (`UNFINISHED`: it stopped while still improving, within its first pass with nothing to show it
    had converged, or its pretraining stopped while the masked-LM loss was still falling), since more training could
    close the gap; with no winner, when either model had not, since a draw between unfinished models is no draw.
    A winner that was itself unfinished changes nothing: more training could only widen its lead.

    Sets `comparison["winner"]` to None and `comparison["unsettled"]` to {`behind` (the first unfinished model),
    `models` (every unfinished one), `stop_reason`, `command`} and, where the comparison has a verdict sentence,
    rewrites it: "Unsettled: <a> leads <b> by ... (or: the interval contains 0), but <findings>; the contest is not
    settled, because <b> had not finished learning. To settle it, give <b> more room: <command>".

    Args:
        comparison: results.json `comparison` (its verdict already carrying the findings' clause), or an entry of
            `comparisons`, which has no verdict sentence.
        findings: model name -> its findings.
        runs: model name -> its run.json, for the command.
        output_dir: the report directory the command writes to again (its finished runs are reused).
    """
    winner, a, b = comparison.get("winner"), comparison["a"], comparison["b"]
    candidates = [b if winner == a else a] if winner else [a, b]
    found = {name: f for name in candidates if name in runs and (f := unfinished(findings.get(name, [])))}
    if not found:
        return
    command = settling_command({name: runs[name] for name in found}, output_dir, found)
    names = " and ".join(found)
    first = next(iter(found.values()))
    comparison["winner"] = None
    comparison["unsettled"] = {
        "behind": next(iter(found)),
        "models": list(found),
        "stop_reason": first["evidence"].get("stop_reason"),
        "command": command,
    }
    if "verdict" not in comparison:
        return
    verdict = comparison["verdict"]
    if winner:
        lead = verdict.replace(f"{winner} beats ", f"{winner} leads ", 1).removesuffix(".")
        why = f"{names}, the model behind, had not finished learning"
    else:
        lead = verdict.removeprefix("No clear winner: ").removesuffix(".")
        why = f"{names} had not finished learning, and no clear winner between unfinished models is no draw"
    comparison["verdict"] = (
        f"Unsettled: {lead}; the contest is not settled, because {why}. To settle it, give {names} more room: {command}"
    )


def settling_command(runs: dict[str, RunRecord], output_dir: Path, found: dict[str, dict] | None = None) -> str:
    """`python -m compare run <the runs' data options> --output-dir DIR --side-args NAME="..."`: the comparison again
    with each model of `runs` given twice the limit that ended it (`more_room`). The other models' finished runs are
    reused."""
    first = next(iter(runs.values()))
    sides_args = [
        f"--side-args {shlex.quote(f'{name}={more_room(run, (found or {}).get(name))}')}" for name, run in runs.items()
    ]
    return " ".join(
        ["python -m compare run", *map(shlex.quote, data_flags(first)), "--output-dir", shlex.quote(str(output_dir))]
        + sides_args
    )


def more_room(run: RunRecord, finding: dict | None = None) -> str:
    """The flags that give a run twice the limit that ended it: for an unfinished pretraining
    (`pretraining_unfinished`), its passes or steps and its minutes of pretraining; else its time budget, step budget
    or epochs (with a time budget, twice that too)."""
    if finding is not None and finding["code"] == "pretraining_unfinished":
        budget = run.pretraining.budget or {}
        more = (
            ["--pretrain-steps", str(2 * budget["steps"])]
            if budget.get("steps")
            else ["--pretrain-epochs", f"{2 * (budget.get('epochs') or run.pretraining.passes or 1):g}"]
        )
        if budget.get("time_budget_minutes"):
            more += ["--pretrain-time-budget", f"{2 * budget['time_budget_minutes']:g}"]
        return " ".join(more)
    training, hyper = run.training, run.hyperparameters
    minutes = (training.budget or {}).get("time_budget_minutes") or hyper.get("time_budget")
    more = []
    if training.stop_reason == "budget" and training.steps:
        more += ["--max-steps", str(2 * training.steps)]
    elif training.stop_reason == "max_epochs":
        more += ["--epochs", str(2 * (hyper.get("epochs") or training.epochs_run or 1))]
    if minutes:
        more += ["--time-budget", f"{2 * minutes:g}"]
    return " ".join(more)


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
        if isinstance(value, bool):  # a boolean is a flag (a default one is left out above)
            flags.append(flag)
            continue
        flags += [flag, *map(str, value)] if isinstance(value, list) else [flag, str(value)]
    return flags
