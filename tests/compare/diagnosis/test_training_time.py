"""Accuracy against training time, on histories worked out by hand."""

from __future__ import annotations

import pytest

from compare.diagnosis.training_time import (
    ahead_at_equal_time,
    best_so_far,
    equal_time_sentence,
    training_curve,
    training_curves,
)
from tests.compare.records import partial  # noqa: I001


def run(val_accuracy, train_seconds=None, seconds=None):
    rows = []
    for i, accuracy in enumerate(val_accuracy):
        row = {"epoch": i + 1, "loss": 1.0, "accuracy": 0.5, "val_loss": 1.0, "val_accuracy": accuracy}
        if train_seconds is not None:
            row["train_seconds"] = train_seconds[i]
        rows.append(row)
    return partial(
        {"training": {"seconds": seconds if seconds is not None else sum(train_seconds or []), "history": rows}}
    )


def test_curve_accumulates_each_epochs_training_seconds():
    curve = training_curve(run([0.6, 0.7, 0.65], train_seconds=[10.0, 12.5, 11.0]))
    assert curve == [
        {"epoch": 1, "seconds": 10.0, "val_accuracy": 0.6},
        {"epoch": 2, "seconds": 22.5, "val_accuracy": 0.7},
        {"epoch": 3, "seconds": 33.5, "val_accuracy": 0.65},
    ]


def test_a_history_without_epoch_times_spreads_the_total_evenly():
    curve = training_curve(run([0.6, 0.7, 0.8, 0.9], seconds=40.0))
    assert [point["seconds"] for point in curve] == [10.0, 20.0, 30.0, 40.0]


def test_best_so_far_is_a_step_function_that_keeps_the_best_epoch():
    curve = training_curve(run([0.6, 0.7, 0.65], train_seconds=[10.0, 10.0, 10.0]))
    assert best_so_far(curve, 9.9) is None
    assert best_so_far(curve, 10.0) == 0.6
    assert best_so_far(curve, 25.0) == 0.7
    assert best_so_far(curve, 30.0) == 0.7  # the third epoch fell back; the run keeps the second


def test_the_leader_at_the_end_of_the_shorter_curve():
    # scratch: epochs end at 5, 10, 15, 20 s; finetune at 12, 24 s. Both cover 12..20 s.
    curves = training_curves(
        {
            "scratch": run([0.50, 0.60, 0.70, 0.72], train_seconds=[5.0, 5.0, 5.0, 5.0]),
            "finetune": run([0.65, 0.90], train_seconds=[12.0, 12.0]),
        }
    )
    result = ahead_at_equal_time(curves)
    # Points at 12 s (finetune's epoch 1; scratch has 0.60), 15 s and 20 s (scratch's epochs 3 and 4).
    assert [p["seconds"] for p in result["points"]] == [12.0, 15.0, 20.0]
    assert [p["ahead"] for p in result["points"]] == ["finetune", "scratch", "scratch"]
    assert result["points"][0]["scores"] == {"scratch": 0.60, "finetune": 0.65}
    assert result["seconds"] == 20.0 and result["ahead"] == "scratch"
    assert result["scores"] == {"scratch": 0.72, "finetune": 0.65}
    sentence = equal_time_sentence(curves)
    assert sentence == (
        "At equal training time (20 s, the end of the shorter run) scratch is ahead: "
        "0.720 against finetune's 0.650 validation accuracy."
    )


def test_equal_accuracy_is_a_tie():
    curves = {
        "a": [{"epoch": 1, "seconds": 4.0, "val_accuracy": 0.8}],
        "b": [{"epoch": 1, "seconds": 2.0, "val_accuracy": 0.7}, {"epoch": 2, "seconds": 6.0, "val_accuracy": 0.8}],
    }
    # The overlap is the single instant 4 s; b has 0.7 there, so a is ahead. At 6 s a no longer counts.
    assert ahead_at_equal_time(curves)["ahead"] == "a"
    curves["b"][0]["val_accuracy"] = 0.8
    result = ahead_at_equal_time(curves)
    assert result["ahead"] is None and result["seconds"] == 4.0
    assert "level at 0.800" in equal_time_sentence(curves)


def test_curves_that_do_not_overlap_have_no_answer():
    # A 4-class news task: scratch's whole training (9 s) ended before finetune's first epoch (300 s).
    curves = training_curves(
        {"finetune": run([0.88, 0.90], train_seconds=[300.0, 300.0]), "scratch": run([0.467], train_seconds=[9.0])}
    )
    assert ahead_at_equal_time(curves) is None
    assert equal_time_sentence(curves) == (
        "The training curves do not overlap: scratch finished training (9 s) before finetune's first epoch "
        "ended (300 s), so they cannot be compared at equal training time."
    )


def test_exactly_two_models_are_compared():
    with pytest.raises(ValueError, match="two models; got 3"):
        ahead_at_equal_time({"a": [], "b": [], "c": []})
    assert ahead_at_equal_time({"a": [], "b": [{"epoch": 1, "seconds": 1.0, "val_accuracy": 0.5}]}) is None
