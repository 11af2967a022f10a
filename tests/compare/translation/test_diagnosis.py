from __future__ import annotations

from compare.translation import diagnosis
from tests.compare.records import partial


def diagnose(run: dict) -> list[dict]:
    return diagnosis.diagnose(partial(run))


def test_a_run_stopped_by_its_epoch_limit_while_improving_is_flagged_with_its_gain() -> None:
    run = {"training": {"stop_reason": "max_epochs", "history": [{"val_chrf": 30.0}, {"val_chrf": 30.25}]}}
    (finding,) = diagnose(run)
    assert finding["evidence"] == {"gain": 0.25, "val_chrf": 30.25, "epochs": 2, "stop_reason": "max_epochs"}
    assert "epoch limit" in finding["message"]


def test_a_single_epoch_or_a_loss_history_has_no_finding() -> None:
    assert diagnose({"training": {"stop_reason": "budget", "history": [{"val_chrf": 5.0}]}}) == []
    assert diagnose({"training": {"stop_reason": "budget", "history": [{"val_loss": 2.0}] * 3}}) == []


def test_a_run_recovering_towards_an_earlier_best_or_barely_rising_has_no_finding() -> None:
    recovering = [{"val_chrf": 30.0}, {"val_chrf": 28.0}, {"val_chrf": 29.5}]
    assert diagnose({"training": {"stop_reason": "budget", "history": recovering}}) == []
    barely = [{"val_chrf": 30.0}, {"val_chrf": 30.1}]
    assert diagnose({"training": {"stop_reason": "budget", "history": barely}}) == []
