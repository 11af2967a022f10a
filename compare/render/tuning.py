"""The report's tuning tables and figure (`compare run --tune N`): the expected best validation score (the task's
headline) against the number of trials, and every trial with its parameters, the chosen one with its test score.

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


def params_text(params: dict) -> str:
    return ", ".join(
        f"{key}={value:g}" if isinstance(value, float) else f"{key}={value}" for key, value in params.items()
    )


def tuning_tables(results: dict) -> list[Table]:
    """Two tables when results.json holds `tuning`, else none."""
    tuning = results.get("tuning")
    if not tuning:
        return []
    sides = list(tuning)
    metric = next(iter(tuning.values())).get("metric", "accuracy")
    label = wording.name(metric) + (" %" if wording.is_fraction(metric) else "")
    longest = max(len(tuning[side]["expected_max_validation"]) for side in sides)
    curve_rows = []
    for n in range(1, longest + 1):
        row = [str(n)]
        for side in sides:
            values = tuning[side]["expected_max_validation"]
            row.append(score(metric, values[n - 1]) if n <= len(values) else "–")
        curve_rows.append(row)
    expected = Table(
        f"Tuning: expected best validation {wording.name(metric)} against the number of trials",
        ["trials", *(f"{side} validation {label}" for side in sides)],
        curve_rows,
        note="The expected maximum of n trials drawn from those run (Dodge et al. 2019, 'Show Your Work'): how much "
        "of a side's tuned score the number of trials bought, and the sides compared at the same tuning budget.",
    )
    trial_rows = []
    for side in sides:
        for index, trial in enumerate(tuning[side]["trials"]):
            chosen = index == tuning[side]["selected"]
            test = score(metric, results["models"][side][metric]) if chosen and side in results["models"] else "–"
            trial_rows.append(
                [
                    side,
                    trial_name(index),
                    params_text(trial["params"]),
                    score(metric, trial[f"validation_{metric}"]),
                    "✓ chosen" if chosen else "",
                    test,
                ]
            )
    trials = Table(
        "Tuning: the trials",
        ["model", "trial", "parameters", f"validation {label}", "chosen", f"{results['split']} {label}"],
        trial_rows,
        note=f"Each side's model in this report is its chosen trial, the one with the best validation "
        f"{wording.name(metric)}; only it was scored on the {results['split']} split.",
    )
    return [expected, trials]


def tuning_figure(tuning: dict, metric: str = "accuracy") -> bytes:
    """Each side's expected best validation score against the number of trials, the trials themselves as dots."""
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for i, (side, search) in enumerate(tuning.items()):
        curve = search["expected_max_validation"]
        ax.plot(range(1, len(curve) + 1), curve, marker="o", color=color(i), label=f"{side}: expected best of n")
        trials = [trial[f"validation_{metric}"] for trial in search["trials"]]
        ax.scatter(range(1, len(trials) + 1), trials, color=color(i), alpha=0.35, s=18, label=f"{side}: each trial")
    style_axes(ax)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("number of trials n (the dots: each trial's own score, in trial order)")
    ax.set_ylabel(f"validation {wording.name(metric)}")
    ax.set_title(f"Tuning: expected best validation {wording.name(metric)} of n trials")
    ax.legend(frameon=False, fontsize=8)
    fig.tight_layout()
    return png_bytes(fig)
