"""Each diagnosis code fires on a history that should trigger it and stays silent on one that should not."""

from __future__ import annotations

import pytest

from compare.diagnosis import findings, verdict
from compare.diagnosis.findings import (
    MIN_LAST_EPOCH_GAIN,
    OVERFITTING_EPOCHS,
    SEED_SPREAD_LIMIT,
    diagnose,
    diagnose_report,
)
from tests.compare.records import partial  # noqa: I001

TFIDF = {"majority": {"accuracy": 0.25, "macro_f1": 0.1}, "tfidf_logreg": {"accuracy": 0.866, "macro_f1": 0.86}}


def history(val_accuracy, val_loss=None, loss=None):
    n = len(val_accuracy)
    val_loss = val_loss or [1.0 - 0.1 * i for i in range(n)]
    loss = loss or [1.2 - 0.1 * i for i in range(n)]
    return [
        {"epoch": i + 1, "loss": loss[i], "accuracy": 0.0, "val_loss": val_loss[i], "val_accuracy": val_accuracy[i]}
        for i in range(n)
    ]


def run(
    rows,
    stop_reason="budget",
    labels=("a", "b", "c", "d"),
    steps=53,
    epochs=3,
    splits=None,
    minutes=None,
    eval_steps=None,
    pretraining=None,
):
    training = {"seconds": 9.0, "epochs_run": len(rows), "best_epoch": len(rows), "steps": steps, "history": rows}
    training["budget"] = {"min_steps": 0, "max_steps": steps}
    if minutes is not None:
        training["budget"]["time_budget_minutes"] = minutes
    if stop_reason is not None:
        training["stop_reason"] = stop_reason
    data = {"labels": list(labels), "splits": splits or {}}
    hyperparameters = {"epochs": epochs, **({"eval_steps": eval_steps} if eval_steps else {})}
    record = {"data": data, "hyperparameters": hyperparameters, "training": training}
    return partial({**record, **({"pretraining": pretraining} if pretraining else {})})


def pretrained(val_losses, errors, stop_reason="time"):
    """run.json `pretraining` whose masked-LM validation loss went through `val_losses`, each fall's standard error
    in `errors` (one fewer)."""
    rows = [{"epoch": i + 1, "loss": v, "steps": 200 * (i + 1), "val_loss": v} for i, v in enumerate(val_losses)]
    for row, error in zip(rows[1:], errors):
        row["val_loss_drop_se"] = error
    return {
        "objective": "masked language modelling",
        "steps": rows[-1]["steps"],
        "history": rows,
        "texts": 6000,
        "passes": 1.7,
        "stop_reason": stop_reason,
        "budget": {"epochs": 3, "steps": None, "time_budget_minutes": 4},
    }


def codes(found):
    return [finding["code"] for finding in found]


# --- stopped_while_improving ------------------------------------------------------------------------------


@pytest.mark.parametrize("reason", ["budget", "max_epochs"])
def test_stopped_while_improving_fires_when_the_limit_ends_a_rising_run(reason):
    found = findings.stopped_while_improving(run(history([0.40, 0.436, 0.467]), stop_reason=reason))
    assert found["code"] == "stopped_while_improving"
    assert found["evidence"]["gain"] == pytest.approx(0.467 - 0.436)
    assert "+3.1 points in its last epoch" in found["message"]
    assert ("--max-steps" if reason == "budget" else "--epochs") in found["message"]
    assert "--profile full" in found["message"]


def test_stopped_while_improving_names_the_validation_period_of_an_eval_steps_run():
    rising = run(history([0.40, 0.436, 0.467]), stop_reason="budget")
    rising.hyperparameters["eval_steps"] = 100
    found = findings.stopped_while_improving(rising)
    assert "+3.1 points in its last 100 steps." in found["message"]
    assert "in its last epoch" not in found["message"]
    assert verdict.finding_phrase(found) == "stopped while still improving (+3.1 points in its last 100 steps)"


def test_stopped_while_improving_is_silent_after_early_stopping_even_if_the_last_epoch_rose():
    assert findings.stopped_while_improving(run(history([0.40, 0.436, 0.467]), stop_reason="early_stopping")) is None


def test_stopped_while_improving_is_silent_when_the_last_epoch_did_not_rise():
    assert findings.stopped_while_improving(run(history([0.40, 0.467, 0.460]))) is None
    assert findings.stopped_while_improving(run(history([0.40, 0.467, 0.467]))) is None


def test_stopped_while_improving_is_silent_when_the_last_epoch_only_recovers_towards_an_earlier_best():
    # The SST-2 quick profile's from-scratch history: best after epoch 1, the budget ended while climbing back.
    assert findings.stopped_while_improving(run(history([0.8154, 0.8016, 0.8028, 0.8073]))) is None


def test_stopped_while_improving_boundary_is_the_documented_minimum_gain():
    assert findings.stopped_while_improving(run(history([0.5, 0.5 + MIN_LAST_EPOCH_GAIN]))) is not None
    assert findings.stopped_while_improving(run(history([0.5, 0.5 + 0.9 * MIN_LAST_EPOCH_GAIN]))) is None


def test_a_single_budget_epoch_is_measured_against_chance():
    # A 4-class news task: one epoch of 53 steps, 0.467 validation accuracy, chance 0.25.
    found = findings.stopped_while_improving(run(history([0.467]), labels=("w", "s", "b", "t")))
    assert found["evidence"]["gain"] == pytest.approx(0.467 - 0.25)
    assert found["message"].startswith("Training ended at its step budget after 53 optimizer steps, within its first")
    assert "0.467 against chance 0.250" in found["message"] and "--max-steps" in found["message"]
    assert findings.stopped_while_improving(run(history([0.25]), labels=("w", "s", "b", "t"))) is None


def test_a_single_validation_after_more_than_a_pass_is_not_called_the_first_epoch():
    # 2,000 steps validated once, on 43,410 train rows in batches of 32: 1.5 passes.
    rows = history([0.447])
    rows[0]["examples"] = 64_000
    long = run(rows, steps=2000, splits={"train": 43_410, "validation": 5_426})
    found = findings.stopped_while_improving(long)
    assert "first epoch" not in found["message"]
    assert "after a single validation (1.5 passes over the train split)" in found["message"]
    assert verdict.finding_phrase(found) == "stopped after 1.5 passes with nothing to show it had converged"
    rows[0]["examples"] = 40_000  # within the first pass: the words stay
    assert "within its first epoch" in findings.stopped_while_improving(long)["message"]


def test_the_clock_ending_a_rising_run_is_said_with_its_minutes_and_the_flag_that_gives_more():
    rows = history([0.17, 0.40, 0.44])
    found = findings.stopped_while_improving(run(rows, stop_reason="time", steps=900, minutes=8))
    assert found["message"].startswith("The clock ended training: its time budget (8 minutes) ran out after 900")
    assert "--time-budget" in found["message"] and found["evidence"]["time_budget_minutes"] == 8
    assert verdict.finding_phrase(found).startswith("stopped at its time budget while still improving (+4.0 points")


def test_the_clock_ending_a_run_no_longer_improving_is_its_own_finding():
    rows = history([0.40, 0.44, 0.43])
    rows[-1]["examples"] = 43_410
    ended = run(rows, stop_reason="time", steps=1200, minutes=8, splits={"train": 43_410})
    assert codes(diagnose(ended, {"accuracy": 0.9}, TFIDF)) == ["stopped_by_clock"]
    found = findings.stopped_by_clock(ended)
    assert found["message"].startswith("The clock ended training: its time budget (8 minutes) ran out after 1200")
    assert "1.00 passes" in found["message"]
    assert findings.stopped_by_clock(run(rows, stop_reason="budget")) is None


def test_a_last_period_the_clock_cut_to_a_step_is_no_validation_of_its_own():
    # SST-2's quick fine-tuning: validated at step 300, the clock struck one step later; nothing shows a plateau.
    rows = history([0.8601, 0.8601], val_loss=[0.3402, 0.3402])
    rows[0]["steps"], rows[1]["steps"] = 300, 301
    ended = run(rows, stop_reason="time", steps=301, minutes=4, labels=("negative", "positive"))
    assert codes(diagnose(ended, {"accuracy": 0.868}, TFIDF)) == ["stopped_while_improving"]
    found = findings.stopped_while_improving(ended)
    assert "within its first epoch: validation accuracy 0.860 against chance 0.500" in found["message"]
    rows[1]["steps"] = 600  # a whole second period at the same score: that is a plateau
    assert codes(diagnose(ended, {"accuracy": 0.868}, TFIDF)) == ["stopped_by_clock"]


def test_the_gain_is_counted_over_the_steps_it_took_when_a_cut_period_is_folded_in():
    # GoEmotions' quick from-scratch run: validated every 250 steps, the clock struck at step 1,114
    rows = history([0.5564, 0.5672, 0.572])
    for row, steps in zip(rows, (750, 1000, 1114)):
        row["steps"] = steps
    ended = run(rows, stop_reason="time", steps=1114, minutes=3, eval_steps=250)
    found = findings.stopped_while_improving(ended)
    assert "0.556 to 0.572, +1.6 points in its last 364 steps" in found["message"]


def test_a_flat_noisy_curve_with_rising_validation_loss_is_not_advised_to_train_longer():
    # From scratch, the last validation a hair above the others while validation loss climbs.
    rows = history([0.612, 0.608, 0.611, 0.615], val_loss=[0.80, 0.82, 0.85, 0.90], loss=[0.7, 0.7, 0.71, 0.7])
    flat = run(rows, splits={"validation": 5_426})
    found = diagnose(flat, {"accuracy": 0.9}, TFIDF)
    assert codes(found) == ["not_learning"]
    assert "training it longer will not help" in found[0]["message"]
    assert "0.608 and 0.615" in found[0]["message"] and "0.820 to 0.900" in found[0]["message"]
    assert not any(flag in f["message"] for f in found for flag in ("--max-steps", "--time-budget", "--profile full"))
    falling = history([0.612, 0.608, 0.611, 0.615], val_loss=[0.90, 0.85, 0.82, 0.80])
    assert codes(diagnose(run(falling), {"accuracy": 0.9}, TFIDF)) == ["stopped_while_improving"]


def test_a_rise_within_the_score_s_standard_error_is_noise():
    # 200 validation rows: the standard error of a score near 0.5 is 3.5 points.
    assert findings.stopped_while_improving(run(history([0.5, 0.53]), splits={"validation": 200})) is None
    assert findings.stopped_while_improving(run(history([0.5, 0.54]), splits={"validation": 200})) is not None


def test_pretraining_unfinished_fires_on_a_falling_masked_lm_curve_and_not_on_a_flat_one():
    falling = run(
        history([0.5, 0.6]), stop_reason="early_stopping", pretraining=pretrained([7.0, 6.2, 5.9], [0.02, 0.01])
    )
    found = findings.pretraining_unfinished(falling)
    assert found["evidence"]["drop"] == pytest.approx(0.3) and found["evidence"]["period"] == 200
    assert "still falling: 6.200 to 5.900 in its last 200 steps" in found["message"]
    assert "when its time budget ran out" in found["message"]
    assert verdict.finding_phrase(found) == (
        "stopped pretraining while its masked-LM loss was still falling (-0.300 in its last 200 steps)"
    )
    # the masked-LM curve of 6,000 SST-2 texts: lowest after 200 steps, then wandering about that level
    flat = run(history([0.5, 0.6]), pretraining=pretrained([7.34, 7.41, 7.60, 7.52], [0.02, 0.013, 0.011]))
    assert findings.pretraining_unfinished(flat) is None  # a significant last fall, but above the earlier low
    noisy = run(history([0.5, 0.6]), pretraining=pretrained([7.0, 5.0, 4.9], [0.02, 0.06]))
    assert findings.pretraining_unfinished(noisy) is None  # a 0.1 fall within twice its standard error
    assert findings.pretraining_unfinished(run(history([0.5, 0.6]))) is None  # no pretraining
    single = run(history([0.5, 0.6]), pretraining=pretrained([7.0], []))
    assert findings.pretraining_unfinished(single) is None


def test_a_validation_score_stuck_at_zero_is_named():
    stuck = run(history([0.0, 0.0, 0.0]), labels=("a", "b"))
    rows = [{**row, "val_macro_f1": 0.0} for row in history([0.0, 0.0, 0.0])]
    found = diagnose(run(rows), {"macro_f1": 0.0}, TFIDF, metric="macro_f1")
    assert codes(found)[0] == "stuck_at_zero"
    assert "was 0 at all 3 validations" in found[0]["message"]
    assert verdict.finding_phrase(found[0]) == "scored 0 at every one of its 3 validations"
    rows[1]["val_macro_f1"] = 0.01
    assert findings.stuck_at_zero(run(rows), "macro_f1") is None
    assert findings.stuck_at_zero(stuck) is not None


def test_without_stop_reason_the_rise_alone_decides():
    assert findings.stopped_while_improving(run(history([0.4, 0.5]), stop_reason=None)) is not None
    assert findings.stopped_while_improving(run(history([0.5, 0.4]), stop_reason=None)) is None


# --- below_baseline ---------------------------------------------------------------------------------------


def test_below_baseline_says_by_how_much():
    found = findings.below_baseline({"accuracy": 0.467, "accuracy_ci": [0.44, 0.49]}, TFIDF)
    assert found["evidence"]["shortfall"] == pytest.approx(0.866 - 0.467)
    assert "39.9 points below" in found["message"] and "0.866" in found["message"]
    assert "whole 95% interval" in found["message"]


def test_below_baseline_does_not_claim_certainty_when_the_interval_reaches_the_baseline():
    found = findings.below_baseline({"accuracy": 0.86, "accuracy_ci": [0.84, 0.88]}, TFIDF)
    assert found is not None and "interval" not in found["message"]


def test_below_baseline_is_silent_at_or_above_the_reference_or_without_one():
    assert findings.below_baseline({"accuracy": 0.866}, TFIDF) is None
    assert findings.below_baseline({"accuracy": 0.896}, TFIDF) is None
    assert findings.below_baseline({"accuracy": 0.1}, {"majority": {"accuracy": 0.25}}) is None


# --- overfitting ------------------------------------------------------------------------------------------


def test_overfitting_fires_when_validation_loss_rises_while_training_loss_falls():
    rows = history([0.8, 0.82, 0.82, 0.81], val_loss=[0.50, 0.45, 0.48, 0.55], loss=[0.6, 0.4, 0.3, 0.2])
    found = findings.overfitting(rows)
    assert found["evidence"]["val_loss"] == [0.45, 0.55]
    assert found["evidence"]["loss"] == [0.4, 0.2]
    assert f"over the last {OVERFITTING_EPOCHS} epochs" in found["message"]


def test_overfitting_is_silent_when_either_trend_breaks_or_the_history_is_short():
    accuracy = [0.8, 0.82, 0.82, 0.81]
    # One flat validation-loss epoch inside the window.
    assert findings.overfitting(history(accuracy, val_loss=[0.5, 0.45, 0.45, 0.55], loss=[0.6, 0.4, 0.3, 0.2])) is None
    # Validation loss rising, but training loss rising too (the learning rate is too high, not memorising).
    assert findings.overfitting(history(accuracy, val_loss=[0.5, 0.45, 0.48, 0.55], loss=[0.6, 0.4, 0.5, 0.6])) is None
    # Rising for one epoch only.
    assert findings.overfitting(history(accuracy, val_loss=[0.5, 0.45, 0.40, 0.55], loss=[0.6, 0.4, 0.3, 0.2])) is None
    # Fewer epochs than the window needs.
    assert findings.overfitting(history([0.8, 0.81], val_loss=[0.4, 0.5], loss=[0.5, 0.4])) is None


# --- unstable_across_seeds --------------------------------------------------------------------------------


def test_unstable_across_seeds_fires_above_the_limit():
    found = findings.unstable_across_seeds([0.84, 0.88, 0.86])
    assert found["evidence"]["spread"] == pytest.approx(0.04)
    assert "0.840 to 0.880 over 3 seeds" in found["message"] and "--seeds" in found["message"]


def test_unstable_across_seeds_fires_when_the_spread_exceeds_the_gap_between_models():
    spread = SEED_SPREAD_LIMIT / 2
    found = findings.unstable_across_seeds([0.85, 0.85 + spread], gap=-spread / 2)
    assert found is not None and "gap between the models" in found["message"]
    assert findings.unstable_across_seeds([0.85, 0.85 + spread], gap=2 * spread) is None


def test_unstable_across_seeds_is_silent_with_one_seed_or_a_small_spread():
    assert findings.unstable_across_seeds(None) is None
    assert findings.unstable_across_seeds([0.5]) is None
    assert findings.unstable_across_seeds([0.85, 0.85 + SEED_SPREAD_LIMIT / 2]) is None


# --- diagnose ---------------------------------------------------------------------------------------------


def test_diagnose_reports_the_news_case_and_nothing_for_a_healthy_model():
    news = run(history([0.467]), stop_reason="budget")
    assert codes(diagnose(news, {"accuracy": 0.467, "accuracy_ci": [0.44, 0.49]}, TFIDF)) == [
        "stopped_while_improving",
        "below_baseline",
    ]
    healthy = run(history([0.85, 0.89, 0.88]), stop_reason="early_stopping")
    assert diagnose(healthy, {"accuracy": 0.896}, TFIDF, seed_scores=[0.89, 0.896, 0.9], gap=0.03) == []


def test_every_finding_has_a_code_from_the_documented_list_and_a_sentence():
    overfit = history([0.3, 0.5, 0.6], val_loss=[0.9, 1.0, 1.1], loss=[1.0, 0.8, 0.6])
    flat = history([0.61, 0.615, 0.612, 0.618], val_loss=[0.9, 0.92, 0.95, 0.99], loss=[1.0, 1.0, 1.0, 1.0])
    cases = [
        (run(overfit), [0.4, 0.5]),
        (run(history([0.3, 0.5, 0.6])), None),
        (run(flat, stop_reason="time"), None),
        (run(history([0.0, 0.0])), None),
        (run(history([0.5, 0.6]), pretraining=pretrained([7.0, 6.0], [0.01])), None),
    ]
    found = [f for case, seeds in cases for f in diagnose(case, {"accuracy": 0.5}, TFIDF, seed_scores=seeds)]
    long = run(history([0.85, 0.89, 0.88]), stop_reason="early_stopping")
    long.data.options = {"task": "imdb"}
    found += diagnose(long, {"accuracy": 0.9}, TFIDF, long_texts=measured("head", 0.5))
    assert set(codes(found)) == set(findings.CODES)
    assert all(finding["message"].endswith(".") for finding in found)


def test_diagnose_report_holds_the_seed_spread_against_the_compared_gap():
    healthy = run(history([0.85, 0.89, 0.88]), stop_reason="early_stopping")
    results = {
        "models": {"finetune": {"accuracy": 0.896}, "scratch": {"accuracy": 0.886}, "other": {"accuracy": 0.9}},
        "baselines": TFIDF,
        "comparison": {"a": "finetune", "b": "scratch", "accuracy_diff": 0.010},
    }
    # A 1.5-point spread is inside the 2-point limit but wider than the 1-point gap between the pair.
    seeds = {"finetune": [0.89, 0.905], "scratch": [0.88, 0.885], "other": [0.89, 0.905]}
    found = diagnose_report({"finetune": healthy, "scratch": healthy, "other": healthy}, results, seeds)
    assert {name: codes(f) for name, f in found.items()} == {
        "finetune": ["unstable_across_seeds"],
        "scratch": [],
        "other": [],
    }
    assert set(diagnose_report({"scratch": healthy}, results)) == {"scratch"}


def test_a_model_just_below_the_reference_is_not_said_to_have_failed_unless_its_interval_says_so():
    # SST-2's quick from-scratch model: 0.828 [0.810, 0.845] against TF-IDF's 0.830
    near = findings.below_baseline(
        {"accuracy": 0.828, "accuracy_ci": [0.810, 0.845]}, {"tfidf_logreg": {"accuracy": 0.83}}
    )
    assert "no better than a bag-of-words model" in near["message"] and "not learned the task" not in near["message"]
    far = findings.below_baseline({"accuracy": 0.70, "accuracy_ci": [0.68, 0.72]}, {"tfidf_logreg": {"accuracy": 0.83}})
    assert "whole 95% interval, 0.680 to 0.720, lies below it" in far["message"]
    assert "has not learned the task" in far["message"]


def measured(reading: str, longer: float) -> dict:
    return {"reading": reading, "window": 126, "split": "test", "splits": {"test": {"longer": longer, "median": 230.0}}}


def test_long_texts_read_by_their_head_are_a_finding_with_the_command_that_reads_them_whole(tmp_path):
    record = partial({"data": {"options": {"task": "imdb", "max_length": 128}}})
    found = findings.long_texts_cut(record, measured("head", 0.4), tmp_path / "report")
    assert found["code"] == "long_texts_cut" and found["evidence"]["longer"] == 0.4
    command = f"python -m compare run --task imdb --long-text chunks --output-dir {tmp_path / 'report'}-chunks"
    assert found["evidence"]["command"] == command and found["message"].endswith(f"({command}).")
    assert found["message"].startswith("40% of the test texts are longer than the model's window of 126 pieces")
    given = partial({"data": {"options": {"task": "imdb", "long_text": "head", "stride": 8}}})
    assert "--stride 8 --long-text chunks" in findings.long_texts_cut(given, measured("head", 0.4))["message"]
    assert "read only the head" in verdict.verdict_clause({"scratch": [found]})


@pytest.mark.parametrize(("reading", "longer"), [("head", 0.10), ("head-tail", 0.9), ("chunks", 0.9)])
def test_long_texts_are_no_finding_when_few_or_read_otherwise(reading, longer):
    record = partial({"data": {"options": {"task": "imdb"}}})
    assert findings.long_texts_cut(record, measured(reading, longer)) is None
    assert findings.long_texts_cut(record, None) is None
