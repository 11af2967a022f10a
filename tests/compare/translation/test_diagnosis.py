from __future__ import annotations

from compare.translation import diagnosis


def test_a_run_stopped_by_its_epoch_limit_while_improving_is_flagged_with_its_gain() -> None:
    run = {"training": {"stop_reason": "max_epochs", "history": [{"val_chrf": 30.0}, {"val_chrf": 30.25}]}}
    (finding,) = diagnosis.diagnose(run)
    assert finding["evidence"] == {"gain": 0.25, "val_chrf": 30.25, "epochs": 2, "stop_reason": "max_epochs"}
    assert "epoch limit" in finding["message"]


def test_a_single_epoch_or_a_loss_history_has_no_finding() -> None:
    assert diagnosis.diagnose({"training": {"stop_reason": "budget", "history": [{"val_chrf": 5.0}]}}) == []
    assert diagnosis.diagnose({"training": {"stop_reason": "budget", "history": [{"val_loss": 2.0}] * 3}}) == []


def test_a_run_recovering_towards_an_earlier_best_or_barely_rising_has_no_finding() -> None:
    recovering = [{"val_chrf": 30.0}, {"val_chrf": 28.0}, {"val_chrf": 29.5}]
    assert diagnosis.diagnose({"training": {"stop_reason": "budget", "history": recovering}}) == []
    barely = [{"val_chrf": 30.0}, {"val_chrf": 30.1}]
    assert diagnosis.diagnose({"training": {"stop_reason": "budget", "history": barely}}) == []
