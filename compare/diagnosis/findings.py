"""Findings that qualify a model's score: each a stable code and a sentence that says what to do.

`diagnose` reads one model's `run.json`, its scores in `results.json` `models.<name>`, the report's
`baselines` and, with several seeds, the test score of each seed. Every rule reads the task's headline score
(`metric`: accuracy, or macro-F1 for multi-label and Spearman for regression; `compare.scoring.wording`), on test
and in the history as `val_<metric>`. It returns a list of findings `{"code", "message", "evidence"}`, the list
that `results.json` `models.<name>.diagnosis` holds:

- `stuck_at_zero`: the watched validation score was 0 at every validation (the model never scored).
- `stopped_while_improving`: a limit ended training (the step budget, the clock of `--time-budget` or the epoch
  limit; not early stopping) while the model was still improving (`still_improving`): the last validation is the
  best so far and above the one before by more than the noise (`noise`: the score's standard error on the
  validation rows, at least `MIN_LAST_EPOCH_GAIN`), below a perfect score, and validation loss did not rise at the last validation (a score rising by a hair while
  the loss rises is noise on a model fitting its training split, not a model short of training). A run of one
  validation has none before it to compare with; its gain is measured against chance (`chance`: 1 / number of
  labels for accuracy, 0 for macro-F1 and Spearman), the score of the untrained model it started from. A run.json
  without `stop_reason` is judged on the rise alone: early stopping never ends on an epoch that improved. The
  message says how training ended (the clock, the step budget, the epoch limit) and how far it got: "within its
  first epoch" only for a run of at most one pass.
- `pretraining_unfinished`: a self-pretrained run's masked-LM pretraining ended while its validation loss was still
  falling by more than its noise (`pretraining_unfinished`).
- `stopped_by_clock`: the clock (`--time-budget`) ended training, the model no longer improving.
- `below_baseline`: the test score below the strongest TF-IDF reference row (`compare.scoring.wording.
  TFIDF_REFERENCES`: logistic regression, one-vs-rest, ridge or cosine) by more than `BASELINE_MARGIN`.
- `overfitting`: over the last `OVERFITTING_EPOCHS` epochs validation loss rose at every epoch while
  training loss fell at every epoch.
- `not_learning`: a limit ended training while the validation score was flat (within `PLATEAU_RANGE` over the last
  `OVERFITTING_EPOCHS` + 1 validations) and validation loss rose: longer training would not help (only when
  `overfitting`, which says more, does not apply).
- `long_texts_cut`: more than `LONG_TEXT_SHARE` of the scored texts are longer than the model's window and it read
  only their head (`--long-text head`, or a run recorded before the option); the message gives the `compare run`
  command that reads them whole (`--long-text chunks`). It reads results.json `data.long_texts.<name>`.
- `unstable_across_seeds`: the range (max - min) of the test score over the seeds exceeds
  `SEED_SPREAD_LIMIT`, or exceeds the gap between the compared models.

`evidence` holds the numbers behind the sentence (fractions in 0..1, like every metric of the suite, or
correlations) and the `metric` they are in, so the verdict clause and the report can quote them without parsing
the message.

Examples:
    >>> from types import SimpleNamespace as record
    >>> run = record(labels=["a", "b"], hyperparameters={}, data=None, training=record(stop_reason="budget", steps=40,
    ...        budget={"min_steps": 0, "max_steps": 40}, history=[
    ...        {"epoch": 1, "loss": 0.7, "val_loss": 0.6, "val_accuracy": 0.70},
    ...        {"epoch": 2, "loss": 0.5, "val_loss": 0.5, "val_accuracy": 0.75}]))
    >>> [f["code"] for f in diagnose(run, {"accuracy": 0.74}, {"tfidf_logreg": {"accuracy": 0.80}})]
    ['stopped_while_improving', 'below_baseline']
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Sequence
from pathlib import Path

from compare.diagnosis import verdict
from compare.scoring import wording
from core.long_text import CHUNKS, HEAD
from core.record import RunRecord

# The smallest rise that counts as learning (0.2 points), where the score's standard error is smaller (`noise`).
MIN_LAST_EPOCH_GAIN = 0.002
# A validation score this high (every example right, a perfect correlation) cannot rise.
PERFECT = 1.0
# Test accuracy this far below the TF-IDF reference counts as below it (0: any shortfall).
BASELINE_MARGIN = 0.0
# Epochs over which validation loss must rise, and training loss fall, at every epoch.
OVERFITTING_EPOCHS = 2
# A range of test accuracy across seeds wider than this (2 points) makes one seed's score unreliable.
SEED_SPREAD_LIMIT = 0.02

# A validation score that moves less than this (1 point) over the last validations is flat.
PLATEAU_RANGE = 0.01
# More than this share of the scored texts longer than the window makes reading only their head a finding.
LONG_TEXT_SHARE = 0.10

CODES = (
    "stuck_at_zero",
    "stopped_while_improving",
    "pretraining_unfinished",
    "stopped_by_clock",
    "below_baseline",
    "overfitting",
    "not_learning",
    "long_texts_cut",
    "unstable_across_seeds",
)


def diagnose(
    run: RunRecord,
    model_scores: dict,
    baselines: dict,
    seed_scores: Sequence[float] | None = None,
    gap: float | None = None,
    metric: str = "accuracy",
    long_texts: dict | None = None,
    output_dir: Path | None = None,
) -> list[dict]:
    """Every finding that applies to one model, in the order of `CODES`.

    Args:
        run: the model's run.json (`core.record.RunRecord`).
        model_scores: its entry in results.json `models` (`metric`, optionally `<metric>_ci`).
        baselines: results.json `baselines`; without a TF-IDF reference there is no baseline check.
        seed_scores: the model's test score under each seed, when several were trained.
        gap: the absolute test-score difference between the compared models, if known.
        metric: the headline score of the task.
        long_texts: its entry in results.json `data.long_texts`, when the report measured it.
        output_dir: where the report is written, for the command a finding gives.
    """
    overfit = overfitting(run.training.history)
    findings = [
        stuck_at_zero(run, metric),
        stopped_while_improving(run, metric),
        pretraining_unfinished(run),
        stopped_by_clock(run, metric),
        below_baseline(model_scores, baselines, metric),
        overfit,
        not_learning(run, metric) if overfit is None else None,
        long_texts_cut(run, long_texts, output_dir),
        unstable_across_seeds(seed_scores, gap, metric),
    ]
    return [finding for finding in findings if finding is not None]


def diagnose_report(
    runs: dict[str, RunRecord],
    results: dict,
    seed_scores: dict[str, Sequence[float]] | None = None,
    output_dir: Path | None = None,
) -> dict[str, list[dict]]:
    """`diagnose` for every model of results.json that has a run: what `models.<name>.diagnosis` holds.

    The metric is results.json `headline_metric`; the gap the seed spread is held against is the comparison's
    difference in it, for the two models it compares.

    Args:
        runs: model name -> its run.json (`core.record.RunRecord`).
        results: results.json (its `models`, `baselines` and `comparison`).
        seed_scores: model name -> its test score under each seed, when several seeds were trained.
        output_dir: where the report is written, for the command a finding gives.
    """
    metric = results.get("headline_metric", "accuracy")
    long_texts = results.get("data", {}).get("long_texts", {})
    comparison = results.get("comparison") or {}
    compared = {comparison.get("a"), comparison.get("b")}
    found = {}
    for name, scores in results["models"].items():
        if name in runs:
            gap = comparison.get(f"{metric}_diff") if name in compared else None
            seeds = (seed_scores or {}).get(name)
            baselines = results.get("baselines", {})
            found[name] = diagnose(runs[name], scores, baselines, seeds, gap, metric, long_texts.get(name), output_dir)
    return found


def rising_gain(scores: Sequence[float], min_gain: float) -> float | None:
    """The last validation's gain in a score when it rose by more than the noise `min_gain` to the best value so
    far; None when it did not (a run recovering towards an earlier, better validation, the one kept, is not rising).

    >>> round(rising_gain([0.80, 0.85, 0.86], 0.002), 3)
    0.01
    >>> rising_gain([0.80, 0.90, 0.86, 0.88], 0.002), rising_gain([0.85, 0.851], 0.002), rising_gain([0.8], 0.0)
    (None, None, None)
    """
    if len(scores) < 2:
        return None
    gain = scores[-1] - scores[-2]
    return gain if gain >= min_gain and scores[-1] >= max(scores) else None


def noise(run: RunRecord, metric: str = "accuracy", score: float | None = None) -> float:
    """The smallest rise that counts as learning: the standard error of the validation score `score` on the run's
    validation rows, or `MIN_LAST_EPOCH_GAIN` when that is more (or the rows are unknown).

    The standard error of a share p (accuracy, an F1) on n examples is sqrt(p (1 - p) / n); of a correlation r,
    (1 - r^2) sqrt(1.06 / (n - 3)) (Fisher's, with Bonett and Wright's 1.06 for Spearman's). A rise smaller than
    that is what drawing another validation split of the same size could give: "+0.2 points in its last 270 steps"
    of macro-F1 on 5,426 texts (a standard error of 0.7 points) is noise.

    >>> from types import SimpleNamespace as record
    >>> run = record(data=record(splits={"validation": 5426}))
    >>> round(noise(run, "macro_f1", 0.45), 4), round(noise(run, "spearman", 0.8), 4)
    (0.0068, 0.005)
    >>> noise(record(data=None), "accuracy", 0.8)
    0.002
    """
    rows = int((getattr(run.data, "splits", None) or {}).get("validation", 0)) if run.data else 0
    if not rows or score is None:
        return MIN_LAST_EPOCH_GAIN
    if wording.is_fraction(metric):
        error = math.sqrt(max(score * (1 - score), 0.0) / rows)
    else:
        error = (1 - min(score * score, 1.0)) * math.sqrt(1.06 / max(rows - 3, 1))
    return max(MIN_LAST_EPOCH_GAIN, error)


def loss_rising(history: Sequence[dict]) -> bool:
    """Whether validation loss rose at the last validation, to above its lowest value: the model fits the training
    split at the expense of new text, so a last gain in the score is no sign that more training helps."""
    losses = [row["val_loss"] for row in history if "val_loss" in row]
    return len(losses) >= 2 and losses[-1] > losses[-2] and losses[-1] > min(losses)


def compared_validations(history: Sequence[dict]) -> list[dict]:
    """The validations whose scores show a trend: `history` with a last period cut to under half the one before (a
    limit that struck just after a validation) standing in for that validation, whose weights it barely changed.

    >>> [row["steps"] for row in compared_validations([{"steps": 300}, {"steps": 600}, {"steps": 601}])]
    [300, 601]
    >>> [row["steps"] for row in compared_validations([{"steps": 300}, {"steps": 600}, {"steps": 900}])]
    [300, 600, 900]
    """
    steps = [row.get("steps") for row in history]
    if len(history) < 2 or None in steps[-3:]:
        return list(history)
    before = steps[-2] - (steps[-3] if len(steps) > 2 else 0)
    return [*history[:-2], history[-1]] if steps[-1] - steps[-2] < before / 2 else list(history)


def still_improving(run: RunRecord, metric: str = "accuracy") -> float | None:
    """The gain that shows a run was still improving when its budget ended it, or None.

    Still improving means: training was ended by a limit (step budget, clock or epoch limit; not early stopping),
    the watched validation score's last value is the best so far and above the one before by at least `noise`
    (the first validation is compared with `chance`), and validation loss did not rise at the last validation; a
    last period the limit cut very short is no validation of its own (`compared_validations`).
    """
    training = run.training
    history, key = compared_validations(training.history), f"val_{metric}"
    if not history or training.stop_reason == "early_stopping" or any(key not in row for row in history):
        return None
    if loss_rising(history) or history[-1][key] >= PERFECT:  # a perfect score has nothing left to converge to
        return None
    scores = [chance(run, metric), *(row[key] for row in history)]
    return rising_gain(scores, noise(run, metric, scores[-1]))


def last_period(run: RunRecord) -> str:
    """What the last entry of the training history covers: "its last epoch", or with `--eval-steps N` (validation
    every N optimizer steps) "its last N steps".

    >>> from types import SimpleNamespace as record
    >>> last_period(record(hyperparameters={"eval_steps": 100})), last_period(record(hyperparameters={}))
    ('its last 100 steps', 'its last epoch')
    """
    steps = run.hyperparameters.get("eval_steps")
    return f"its last {steps} steps" if steps else "its last epoch"


def passes(run: RunRecord) -> float | None:
    """Passes over the train split the run trained for (its history's examples over the train rows); None when the
    run does not say."""
    rows = getattr(run, "train_rows", 0)
    examples = sum(row.get("examples", 0) for row in run.training.history)
    return examples / rows if rows and examples else None


def time_budget(run: RunRecord) -> float | None:
    """The minutes of `--time-budget` the run was given, if any."""
    return (run.training.budget or {}).get("time_budget_minutes")


def chance(run: RunRecord, metric: str) -> float:
    """The untrained model's score a first epoch rose from: 1 / number of labels for accuracy; 0 for macro-F1
    and Spearman (no label found, no correlation)."""
    return 1 / len(run.labels) if metric == "accuracy" else 0.0


def how_it_ended(run: RunRecord) -> tuple[str, str]:
    """(how training ended, the flag that gives it more) for a run its budget, clock or epoch limit ended."""
    training = run.training
    steps = f" after {training.steps} optimizer steps" if training.steps else ""
    if training.stop_reason == "time":
        minutes = time_budget(run)
        budget = f" ({minutes:g} minutes)" if minutes else ""
        return f"The clock ended training: its time budget{budget} ran out{steps}", "a larger --time-budget"
    if training.stop_reason == "max_epochs":
        limit = run.hyperparameters.get("epochs") or len(training.history)
        return f"Training ended at its epoch limit ({wording.plural(limit, 'epoch')})", "a larger --epochs"
    return f"Training ended at its step budget{steps}", "a larger --max-steps"


def stopped_while_improving(run: RunRecord, metric: str = "accuracy") -> dict | None:
    gain = still_improving(run, metric)
    if gain is None:
        return None
    training = run.training
    history, key = compared_validations(training.history), f"val_{metric}"
    last = history[-1][key]
    before = last - gain
    ended, more = how_it_ended(run)
    advice = f"rerun with --profile full or {more}"
    score = f"validation {wording.name(metric)}"
    period = last_period(run)
    if len(history) > 1 and run.hyperparameters.get("eval_steps") and all("steps" in row for row in history[-2:]):
        period = f"its last {history[-1]['steps'] - history[-2]['steps']} steps"  # a cut period counted in
    trained = passes(run)
    if len(history) > 1:
        rising = (
            f"{ended} while {score} was still rising: {before:.3f} to {last:.3f}, "
            f"{wording.size(metric, gain, signed=True)} in {period}."
        )
    else:
        within = (
            "within its first epoch"
            if trained is None or trained <= 1
            else f"after a single validation ({trained:.1f} passes over the train split)"
        )
        rising = (
            f"{ended}, {within}: {score} {last:.3f} against chance {before:.3f}, "
            "and no later validation to show it had stopped improving."
        )
    return {
        "code": "stopped_while_improving",
        "message": f"{rising} The score likely understates what this model can reach; {advice}.",
        "evidence": {
            "gain": gain,
            key: last,
            "epochs": len(history),
            "period": period,
            "stop_reason": training.stop_reason,
            "passes": trained,
            "time_budget_minutes": time_budget(run),
            "metric": metric,
        },
    }


def pretraining_unfinished(run: RunRecord) -> dict | None:
    """A self-pretrained run whose masked-LM pretraining ended (its passes, steps or minutes) while the validation
    loss was still falling: its last value the lowest so far, and below the one before by more than twice the fall's
    standard error (paired over the same masked pieces: the noise of drawing other validation texts). A curve whose
    last value is above an earlier low has flattened, whatever its last step did: it wanders about a level it has
    reached. Its fine-tuned score then says little about what the objective gives.

    >>> from types import SimpleNamespace as record
    >>> rows = [{"steps": 200, "val_loss": 6.0}, {"steps": 400, "val_loss": 5.5, "val_loss_drop_se": 0.01}]
    >>> run = record(pretraining=record(history=rows, passes=0.5, stop_reason="time", budget={}))
    >>> pretraining_unfinished(run)["evidence"]["drop"]
    0.5
    >>> rows[-1].update(val_loss=5.99); pretraining_unfinished(run) is None
    True
    """
    pretraining = getattr(run, "pretraining", None)
    rows = [row for row in (pretraining.history if pretraining else []) if "val_loss" in row]
    if len(rows) < 2 or "val_loss_drop_se" not in rows[-1]:
        return None
    before, last = rows[-2]["val_loss"], rows[-1]["val_loss"]
    drop, error = before - last, rows[-1]["val_loss_drop_se"]
    if drop <= 2 * error or last > min(row["val_loss"] for row in rows):
        return None
    steps = rows[-1]["steps"] - rows[-2]["steps"]
    passes = pretraining.passes
    trained = f"{rows[-1]['steps']:,} steps" + (f" ({passes:.2f} passes over its texts)" if passes else "")
    ended = "its time budget ran out" if pretraining.stop_reason == "time" else "its planned passes ran out"
    return {
        "code": "pretraining_unfinished",
        "message": (
            f"Self-pretraining ended after {trained}, when {ended}, while its masked-LM validation loss was still "
            f"falling: {before:.3f} to {last:.3f} in its last {steps} steps (twice its standard error is "
            f"{2 * error:.3f}). The model was compared before it had learned the objective, so its score understates "
            "what self-pretraining gives; rerun with --pretrain-epochs or --pretrain-time-budget larger."
        ),
        "evidence": {
            "drop": drop,
            "drop_se": error,
            "val_loss": last,
            "steps": rows[-1]["steps"],
            "period": steps,
            "passes": passes,
            "stop_reason": pretraining.stop_reason,
            "budget": pretraining.budget,
        },
    }


def stopped_by_clock(run: RunRecord, metric: str = "accuracy") -> dict | None:
    """The clock ended training, the run no longer improving (a run still improving has `stopped_while_improving`,
    which says so)."""
    training = run.training
    if training.stop_reason != "time" or still_improving(run, metric) is not None:
        return None
    ended, _ = how_it_ended(run)
    trained = passes(run)
    over = f", {trained:.2f} passes over the train split" if trained else ""
    return {
        "code": "stopped_by_clock",
        "message": (
            f"{ended}{over}. Its validation {wording.name(metric)} was no longer rising when it did, so more time is "
            "unlikely to change its score much."
        ),
        "evidence": {"time_budget_minutes": time_budget(run), "steps": training.steps, "passes": trained},
    }


def not_learning(run: RunRecord, metric: str = "accuracy") -> dict | None:
    """A limit ended a run whose watched validation score was flat (within `PLATEAU_RANGE` over the last
    `OVERFITTING_EPOCHS` + 1 validations) while validation loss rose: training longer would not help."""
    training = run.training
    history, key = list(training.history), f"val_{metric}"
    window = history[-(OVERFITTING_EPOCHS + 1) :]
    if training.stop_reason == "early_stopping" or len(window) < OVERFITTING_EPOCHS + 1:
        return None
    if any(key not in row or "val_loss" not in row for row in window) or not loss_rising(history):
        return None
    scores = [row[key] for row in window]
    if max(scores) - min(scores) > PLATEAU_RANGE or window[-1]["val_loss"] <= window[0]["val_loss"]:
        return None
    first, last = window[0]["val_loss"], window[-1]["val_loss"]
    return {
        "code": "not_learning",
        "message": (
            f"Validation {wording.name(metric)} stayed between {min(scores):.3f} and {max(scores):.3f} over the last "
            f"{len(window)} validations while validation loss rose from {first:.3f} to {last:.3f}: the model is no "
            "longer learning anything that carries over to new text, and training it longer will not help. Raise "
            "--dropout or --weight-decay, lower --learning-rate, tune it (--tune N), or give it more data."
        ),
        "evidence": {"low": min(scores), "high": max(scores), "val_loss": [first, last], "metric": metric},
    }


def stuck_at_zero(run: RunRecord, metric: str = "accuracy") -> dict | None:
    """The watched validation score was 0 at every validation: the model never scored at all."""
    history, key = run.training.history, f"val_{metric}"
    if not history or any(row.get(key, 1.0) != 0 for row in history):
        return None
    return {
        "code": "stuck_at_zero",
        "message": (
            f"Validation {wording.name(metric)} was 0 at all {len(history)} validations: the model never got a "
            "single case right by this score (it predicts no label, or the same output for every text). Its test "
            "score says nothing about the approach; check --learning-rate (too high collapses it, too low never "
            "moves it), train it longer or tune it (--tune N)."
        ),
        "evidence": {"validations": len(history), "metric": metric},
    }


def strongest_reference(baselines: dict, metric: str) -> str | None:
    """The TF-IDF reference row of `baselines` with the best `metric`, or None when there is none."""
    found = [key for key in wording.TFIDF_REFERENCES if (baselines or {}).get(key)]
    return max(found, key=lambda key: baselines[key][metric], default=None)


def below_baseline(model_scores: dict, baselines: dict, metric: str = "accuracy") -> dict | None:
    reference = strongest_reference(baselines, metric)
    if reference is None:
        return None
    score, baseline = model_scores[metric], baselines[reference][metric]
    shortfall = baseline - score
    if shortfall <= BASELINE_MARGIN:
        return None
    interval = model_scores.get(f"{metric}_ci")
    certainty, meaning = "", "A model no better than a bag-of-words model has learned no more than word counts tell"
    if interval and interval[1] < baseline:
        certainty = f"; its whole 95% interval, {interval[0]:.3f} to {interval[1]:.3f}, lies below it"
        meaning = "A model a bag-of-words model beats has not learned the task"
    return {
        "code": "below_baseline",
        "message": (
            f"Test {wording.name(metric)} {score:.3f} is {wording.size(metric, shortfall)} below the "
            f"{wording.REFERENCE_NAMES[reference]} reference ({baseline:.3f}){certainty}. {meaning}; train it longer "
            "or tune it (--tune N) before reading the comparison, or use the TF-IDF model."
        ),
        "evidence": {"shortfall": shortfall, metric: score, "baseline": baseline, "metric": metric},
    }


def overfitting(history: Sequence[dict]) -> dict | None:
    window = list(history)[-(OVERFITTING_EPOCHS + 1) :]
    if len(window) < OVERFITTING_EPOCHS + 1:
        return None
    pairs = list(zip(window, window[1:]))
    val_rose = all(later["val_loss"] > earlier["val_loss"] for earlier, later in pairs)
    loss_fell = all(later["loss"] < earlier["loss"] for earlier, later in pairs)
    if not (val_rose and loss_fell):
        return None
    first, last = window[0], window[-1]
    return {
        "code": "overfitting",
        "message": (
            f"Validation loss rose from {first['val_loss']:.3f} to {last['val_loss']:.3f} over the last "
            f"{OVERFITTING_EPOCHS} epochs while training loss fell from {first['loss']:.3f} to {last['loss']:.3f}: "
            "the model is fitting the training split at the expense of new text. Raise --dropout or "
            "--weight-decay, lower --learning-rate, or train on more data."
        ),
        "evidence": {
            "epochs": OVERFITTING_EPOCHS,
            "val_loss": [first["val_loss"], last["val_loss"]],
            "loss": [first["loss"], last["loss"]],
        },
    }


def long_texts_cut(run: RunRecord, long_texts: dict | None, output_dir: Path | None = None) -> dict | None:
    """More than `LONG_TEXT_SHARE` of the scored texts are longer than the model's window, and it read their head.

    >>> from types import SimpleNamespace as record
    >>> run = record(data=record(options={"task": "imdb", "max_length": 128}))
    >>> measured = {"reading": "head", "window": 126, "split": "test", "splits": {"test": {"longer": 0.8, "median": 250.0}}}
    >>> print(long_texts_cut(run, measured, Path("reports/imdb"))["message"])  # doctest: +NORMALIZE_WHITESPACE
    80% of the test texts are longer than the model's window of 126 pieces (median length 250), and it read only
    their first 126 pieces. Read each text whole, in overlapping windows pooled into one answer (python -m compare
    run --task imdb --long-text chunks --output-dir reports/imdb-chunks).
    """
    if not long_texts or long_texts.get("reading") != HEAD:
        return None
    split = long_texts.get("split", "test")
    measured = long_texts.get("splits", {}).get(split)
    if not measured or measured["longer"] <= LONG_TEXT_SHARE:
        return None
    window = long_texts["window"]
    flags = verdict.data_flags(run)
    if "--long-text" in flags:  # `--long-text head`, given
        del flags[flags.index("--long-text") : flags.index("--long-text") + 2]
    out = f"{output_dir or Path('reports') / 'report'}-chunks"
    command = " ".join(["python -m compare run", *map(shlex.quote, flags), "--long-text", CHUNKS, "--output-dir", out])
    return {
        "code": "long_texts_cut",
        "message": (
            f"{measured['longer']:.0%} of the {split} texts are longer than the model's window of {window} pieces "
            f"(median length {measured['median']:g}), and it read only their first {window} pieces. Read each text "
            f"whole, in overlapping windows pooled into one answer ({command})."
        ),
        "evidence": {"longer": measured["longer"], "median": measured["median"], "window": window, "command": command},
    }


def unstable_across_seeds(
    seed_scores: Sequence[float] | None, gap: float | None = None, metric: str = "accuracy"
) -> dict | None:
    if seed_scores is None or len(seed_scores) < 2:
        return None
    low, high = min(seed_scores), max(seed_scores)
    spread = high - low
    over_limit = spread > SEED_SPREAD_LIMIT
    over_gap = gap is not None and spread > abs(gap)
    if not (over_limit or over_gap):
        return None
    reasons = []
    if over_gap:
        reasons.append(
            f"wider than the {wording.size(metric, gap).replace(' points', '-point')} gap between the models"
        )
    if over_limit:
        limit = f"{100 * SEED_SPREAD_LIMIT:.0f}-point" if wording.is_fraction(metric) else f"{SEED_SPREAD_LIMIT:.3f}"
        reasons.append(f"above the {limit} limit for a stable score")
    return {
        "code": "unstable_across_seeds",
        "message": (
            f"Test {wording.name(metric)} ranges from {low:.3f} to {high:.3f} over {len(seed_scores)} seeds "
            f"({wording.size(metric, spread)}, {' and '.join(reasons)}). One seed's score may rank the models "
            "differently; report the mean over more --seeds."
        ),
        "evidence": {
            "spread": spread,
            "low": low,
            "high": high,
            "seeds": len(seed_scores),
            "gap": gap,
            "metric": metric,
        },
    }
