"""The report's tuning tables and figure (`compare run --tune N`), read from results.json `tuning`, which
`compare.run.tuning` reads from the Optuna studies: every trial with its state (completed, or pruned at which
validation), parameters, validation score (the task's headline), optimizer steps and seconds, the chosen one with
its test score; the expected best validation score against the number of trials (a random search only); the
parameters' importances (Optuna's fANOVA evaluator, with at least `IMPORTANCE_TRIALS` completed trials); and the
optimization history as a figure.

Only the chosen trial was scored on the test split; the others have no test score to show.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator

from compare.render.figures import color, png_bytes, style_axes
from compare.render.format import score
from compare.render.tables import Table
from compare.scoring import wording
from compare.tune import trial_name

FIGURE = "tuning.png"
NOT_EXPECTED = (
    "The expected best of n trials is left out: TPE drew each trial from the ones before it, and the curve of "
    "Dodge et al. (2019) assumes independent draws (--tune-sampler random)."
)


def tuned(tuning: dict) -> list[str]:
    """The tuned sides of results.json `tuning` (its keys but `study`)."""
    return [key for key in tuning if key != "study"]


def params_text(params: dict) -> str:
    return ", ".join(
        f"{key}={value:.3g}" if isinstance(value, float) else f"{key}={value}" for key, value in params.items()
    )


def state_text(trial: dict) -> str:
    """`completed`, `pruned at validation 2`, or `failed`."""
    state = trial.get("state", "complete")
    if state == "pruned":
        return f"pruned at validation {trial['pruned_at']}" if trial.get("pruned_at") else "pruned"
    return {"complete": "completed", "fail": "failed"}.get(state, state)


def tuning_tables(results: dict) -> list[Table]:
    """The tuning tables when results.json holds `tuning`, else none."""
    tuning = results.get("tuning")
    if not tuning:
        return []
    sides = tuned(tuning)
    metric = tuning[sides[0]].get("metric", "accuracy")
    label = wording.name(metric) + (" %" if wording.is_fraction(metric) else "")
    tables = []
    curves = [side for side in sides if tuning[side].get("expected_max_validation")]
    if curves:
        longest = max(len(tuning[side]["expected_max_validation"]) for side in curves)
        rows = []
        for n in range(1, longest + 1):
            row = [str(n)]
            for side in curves:
                values = tuning[side]["expected_max_validation"]
                row.append(score(metric, values[n - 1]) if n <= len(values) else "–")
            rows.append(row)
        tables.append(
            Table(
                f"Tuning: expected best validation {wording.name(metric)} against the number of trials",
                ["trials", *(f"{side} validation {label}" for side in curves)],
                rows,
                note="The expected maximum of n trials drawn from the completed ones (Dodge et al. 2019, 'Show Your "
                "Work'): how much of a side's tuned score the number of trials bought, and the sides compared at the "
                "same tuning budget.",
            )
        )
    tables.append(trials_table(results, sides, metric, label))
    importances = [side for side in sides if tuning[side].get("importances")]
    if importances:
        rows = [
            [side, name, f"{value:.2f}"] for side in importances for name, value in tuning[side]["importances"].items()
        ]
        tables.append(
            Table(
                "Tuning: the parameters' importances",
                ["model", "parameter", "importance"],
                rows,
                note="Optuna's fANOVA evaluator: the share of the completed trials' validation variance each "
                "parameter explains (each side's shares sum to 1).",
            )
        )
    return tables


def trials_table(results: dict, sides: list[str], metric: str, label: str) -> Table:
    """Every trial of every tuned side: state, parameters, validation, steps, seconds, chosen, test."""
    tuning, rows = results["tuning"], []
    for side in sides:
        for index, trial in enumerate(tuning[side]["trials"]):
            chosen = index == tuning[side]["selected"]
            test = score(metric, results["models"][side][metric]) if chosen and side in results["models"] else "–"
            value = trial.get(f"validation_{metric}")
            rows.append(
                [
                    side,
                    trial_name(trial.get("number", index)),
                    state_text(trial),
                    params_text(trial["params"]),
                    score(metric, value) if value is not None else "–",
                    f"{trial['steps']:,}" if trial.get("steps") is not None else "–",
                    f"{trial['seconds']:.0f}" if trial.get("seconds") is not None else "–",
                    "✓ chosen" if chosen else "",
                    test,
                ]
            )
    notes = [
        f"Each tuned model in this report is its chosen trial, the completed one with the best validation "
        f"{wording.name(metric)}; only it was scored on the {results['split']} split."
    ]
    for side in sides:
        if tuning[side].get("pruned"):
            notes.append(
                f"{side}: {tuning[side]['pruned']} trial(s) pruned, {tuning[side].get('saved_steps', 0):,} optimizer "
                "steps of their training lengths left untrained."
            )
    if any(tuning[side].get("expected_max_validation") is None for side in sides):
        notes.append(NOT_EXPECTED)
    study = tuning.get("study")
    if study:
        notes.append(
            f"The trials are those of the Optuna studies {', '.join(study['studies'].values())} in {study['storage']} "
            f"({study['sampler']} sampler, {study['pruner']} pruner): optuna.load_study or optuna-dashboard opens them."
        )
    return Table(
        "Tuning: the trials",
        [
            "model",
            "trial",
            "state",
            "parameters",
            f"validation {label}",
            "steps",
            "seconds",
            "chosen",
            f"{results['split']} {label}",
        ],
        rows,
        note=" ".join(notes),
    )


def tuning_figure(tuning: dict, metric: str = "accuracy") -> bytes:
    """The optimization history of each side (each trial's validation score in trial order, pruned ones hollow, the
    best so far as a step line, and the expected best of n trials where it applies); beside it the parameters'
    importances when they were computed."""
    sides = tuned(tuning)
    importances = [side for side in sides if tuning[side].get("importances")]
    fig, axes = plt.subplots(1, 2 if importances else 1, figsize=(10.4 if importances else 6.4, 3.8), squeeze=False)
    ax = axes[0][0]
    for i, side in enumerate(sides):
        trials = tuning[side]["trials"]
        values = [trial.get(f"validation_{metric}") for trial in trials]
        done = [
            (n, v)
            for n, (t, v) in enumerate(zip(trials, values), 1)
            if v is not None and t.get("state", "complete") == "complete"
        ]
        cut = [
            (n, v) for n, (t, v) in enumerate(zip(trials, values), 1) if v is not None and t.get("state") == "pruned"
        ]
        if done:
            ax.scatter(*zip(*done), color=color(i), s=22, label=f"{side}: completed trial")
            best, line = float("-inf"), []
            for n, v in done:
                best = max(best, v)
                line.append((n, best))
            line.append((len(trials), best))  # the best so far holds to the last trial, pruned ones included
            ax.step(*zip(*line), where="post", color=color(i), alpha=0.6, label=f"{side}: best so far")
        if cut:
            ax.scatter(*zip(*cut), facecolors="none", edgecolors=color(i), s=22, label=f"{side}: pruned trial")
        curve = tuning[side].get("expected_max_validation")
        if curve:
            ax.plot(
                range(1, len(curve) + 1), curve, linestyle="--", color=color(i), label=f"{side}: expected best of n"
            )
    style_axes(ax)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("trial (for the dashed line: the number of trials n)")
    ax.set_ylabel(f"validation {wording.name(metric)}")
    ax.set_title(f"Tuning: validation {wording.name(metric)} of each trial")
    ax.legend(frameon=False, fontsize=7)
    if importances:
        ax = axes[0][1]
        names = sorted({name for side in importances for name in tuning[side]["importances"]})
        width = 0.8 / len(importances)
        for i, side in enumerate(importances):
            shares = [tuning[side]["importances"].get(name, 0.0) for name in names]
            ax.barh([k + i * width for k in range(len(names))], shares, height=width, color=color(i), label=side)
        ax.set_yticks([k + width * (len(importances) - 1) / 2 for k in range(len(names))], names)
        style_axes(ax)
        ax.set_xlabel("importance (fANOVA)")
        ax.set_title("Parameters' importances")
        ax.legend(frameon=False, fontsize=8)
    fig.tight_layout()
    return png_bytes(fig)
