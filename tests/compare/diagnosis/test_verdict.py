"""The verdict's clause names each qualified model and quotes its findings' numbers; the verdict names no winner
while the model behind was still improving, and says the command that settles it."""

from __future__ import annotations

from pathlib import Path

import pytest

from compare.diagnosis.findings import diagnose
from compare.diagnosis.verdict import finding_phrase, settle, verdict_clause
from compare.scoring.statistics import verdict
from tests.compare.records import Section, partial


def news_scratch_findings():
    history = [{"epoch": 1, "loss": 1.2, "val_loss": 1.1, "val_accuracy": 0.467}]
    run = {
        "data": {"labels": ["world", "sports", "business", "sci/tech"]},
        "training": {"stop_reason": "budget", "steps": 53, "budget": {"max_steps": 53}, "history": history},
    }
    return diagnose(partial(run), {"accuracy": 0.467}, {"tfidf_logreg": {"accuracy": 0.866}})


def test_the_news_case_qualifies_the_verdict_with_both_findings():
    clause = verdict_clause({"finetune": [], "scratch": news_scratch_findings()})
    assert clause == (
        ", but the from-scratch model stopped within its first epoch with nothing to show it had converged"
        " and is 39.9 points below the TF-IDF reference"
    )


def test_models_are_separated_and_named_by_the_given_descriptions():
    findings = {
        "finetune": [{"code": "unstable_across_seeds", "evidence": {"spread": 0.031}}],
        "tiny": [
            {"code": "overfitting", "evidence": {"epochs": 2}},
            {"code": "below_baseline", "evidence": {"shortfall": 0.004}},
            {"code": "stopped_while_improving", "evidence": {"gain": 0.01, "epochs": 4}},
        ],
    }
    clause = verdict_clause(findings, descriptions={"tiny": "the tiny model"})
    assert clause == (
        ", but the fine-tuned model varies by 3.1 points across seeds; the tiny model was overfitting "
        "(validation loss rising over its last 2 epochs), is 0.4 points below the TF-IDF reference and "
        "stopped while still improving (+1.0 points in its last epoch)"
    )


def test_no_findings_leave_the_verdict_as_it_is():
    assert verdict_clause({}) == ""
    assert verdict_clause({"finetune": [], "scratch": []}) == ""


def test_an_unknown_code_is_refused_by_name():
    with pytest.raises(ValueError, match="'mystery'"):
        finding_phrase({"code": "mystery", "evidence": {}})


# --- settle: no winner while the model behind was still improving ------------------------------------------


def rising_run(scores, stop_reason, **training):
    """A run.json whose watched validation accuracy went through `scores`, ended by `stop_reason`."""
    history = [
        {"epoch": i + 1, "loss": 1.0 - 0.1 * i, "val_loss": 1.0 - 0.1 * i, "val_accuracy": v, "examples": 9600}
        for i, v in enumerate(scores)
    ]
    return partial(
        {
            "data": {
                "labels": ["a", "b", "c", "d"],
                "splits": {"train": 43_410, "validation": 5_426},
                "options": {
                    "task": "goemotions_ekman",
                    "problem": "multi_label_classification",
                    "data_dir": "/data",
                    "seed": 42,
                    "max_length": 128,
                },
            },
            "training": {"stop_reason": stop_reason, "history": history, **training},
        }
    )


def compared(a_score: float, b_score: float) -> dict:
    """results.json `comparison` of finetune against scratch, its winner decided by `statistics.verdict`."""
    diff = a_score - b_score
    comparison = {
        "a": "finetune",
        "b": "scratch",
        "accuracy_diff": diff,
        "accuracy_diff_ci": [diff - 0.01, diff + 0.01],
    }
    comparison["bootstrap_p"] = 0.001
    comparison["winner"], comparison["verdict"] = verdict(comparison["a"], comparison["b"], comparison)
    return comparison


def settled(comparison: dict, runs: dict) -> dict:
    found = {name: diagnose(run, {"accuracy": 0.9}, {}) for name, run in runs.items()}
    clause = verdict_clause(found)
    comparison["verdict"] = comparison["verdict"].removesuffix(".") + clause + "."
    settle(comparison, found, runs, Path("/tmp/goemo-report"))
    return comparison


def test_the_model_behind_stopped_by_the_clock_while_improving_leaves_the_contest_unsettled():
    runs = {
        "finetune": rising_run([0.17, 0.40, 0.44], "time", steps=900, budget={"time_budget_minutes": 8}),
        "scratch": rising_run([0.50, 0.56, 0.55], "budget", steps=2000),
    }
    comparison = settled(compared(0.44, 0.57), runs)
    assert comparison["winner"] is None
    assert comparison["unsettled"]["behind"] == "finetune" and comparison["unsettled"]["stop_reason"] == "time"
    command = (
        "python -m compare run --task goemotions_ekman --output-dir /tmp/goemo-report "
        "--side-args 'finetune=--time-budget 16'"
    )
    assert comparison["unsettled"]["command"] == command
    text = comparison["verdict"]
    assert text.startswith("Unsettled: scratch leads finetune by 13.0 points")
    assert "the fine-tuned model stopped at its time budget while still improving (+4.0 points" in text
    assert "not settled, because finetune, the model behind, had not finished learning" in text
    assert text.endswith(f"To settle it, give finetune more room: {command}")
    assert verdict_table_head(comparison) == ("Unsettled", "S" + text.removeprefix("Unsettled: s"))


def test_a_step_budget_stop_is_settled_with_twice_the_steps():
    runs = {
        "finetune": rising_run([0.80, 0.85], "budget", steps=500),
        "scratch": rising_run([0.90, 0.91, 0.90], "budget", steps=2000),
    }
    comparison = settled(compared(0.85, 0.90), runs)
    assert comparison["winner"] is None and comparison["unsettled"]["command"].endswith("'finetune=--max-steps 1000'")


def test_a_winner_that_was_itself_still_improving_stays_the_winner():
    runs = {
        "finetune": rising_run([0.17, 0.40, 0.60], "time", steps=1357, budget={"time_budget_minutes": 8}),
        "scratch": rising_run([0.50, 0.56, 0.55], "budget", steps=2000),  # behind, no longer improving
    }
    comparison = settled(compared(0.60, 0.55), runs)
    assert comparison["winner"] == "finetune" and "unsettled" not in comparison
    assert comparison["verdict"].startswith("finetune beats scratch by 5.0 points")
    assert "the fine-tuned model stopped at its time budget while still improving" in comparison["verdict"]


def test_no_winner_between_two_finished_models_stays_no_winner():
    runs = {
        "finetune": rising_run([0.4, 0.5, 0.49], "budget", steps=10),
        "scratch": rising_run([0.4, 0.5], "early_stopping"),
    }
    comparison = compared(0.5, 0.5)
    before = dict(comparison)
    settle(comparison, {name: diagnose(r, {"accuracy": 0.5}, {}) for name, r in runs.items()}, runs, Path("x"))
    assert comparison == before and comparison["verdict"].startswith("No clear winner")


def test_no_winner_with_a_model_still_improving_is_unsettled_not_a_draw():
    runs = {
        "finetune": rising_run([0.40, 0.50], "time", steps=300, budget={"time_budget_minutes": 4}),
        "scratch": rising_run([0.40, 0.50, 0.49], "budget", steps=2000),
    }
    comparison = settled(compared(0.5, 0.5), runs)
    assert comparison["winner"] is None and comparison["unsettled"]["models"] == ["finetune"]
    text = comparison["verdict"]
    assert text.startswith("Unsettled: the 95% interval of finetune minus scratch: [-1.0, +1.0] points contains 0")
    assert (
        "because finetune had not finished learning, and no clear winner between unfinished models is no draw" in text
    )
    assert text.endswith("--side-args 'finetune=--time-budget 8'")


def test_a_model_behind_stopped_within_its_first_pass_leaves_an_unsettled_verdict_with_the_command():
    runs = {  # one validation, at the clock, after 9,600 of 43,410 training texts
        "finetune": rising_run([0.38], "time", steps=300, budget={"time_budget_minutes": 4}),
        "scratch": rising_run([0.50, 0.56, 0.55], "budget", steps=2000),
    }
    comparison = settled(compared(0.38, 0.55), runs)
    assert comparison["winner"] is None and comparison["unsettled"]["behind"] == "finetune"
    text = comparison["verdict"]
    assert "the fine-tuned model stopped at its time budget within its first epoch with nothing to show" in text
    assert text.endswith(
        "To settle it, give finetune more room: python -m compare run --task goemotions_ekman --output-dir "
        "/tmp/goemo-report --side-args 'finetune=--time-budget 8'"
    )


def test_a_last_gain_within_the_score_s_noise_is_not_still_improving():
    # 5,426 validation texts: the standard error of a score near 0.45 is 0.68 points
    within = rising_run([0.40, 0.450, 0.452], "time", steps=900, budget={"time_budget_minutes": 4})
    assert "stopped_while_improving" not in [f["code"] for f in diagnose(within, {"accuracy": 0.45}, {})]
    beyond = rising_run([0.40, 0.450, 0.460], "time", steps=900, budget={"time_budget_minutes": 4})
    assert "stopped_while_improving" in [f["code"] for f in diagnose(beyond, {"accuracy": 0.45}, {})]


def test_a_model_at_a_perfect_score_has_nothing_left_to_converge_to():
    perfect = rising_run([1.0], "max_epochs", steps=20)
    assert diagnose(perfect, {"accuracy": 1.0}, {}) == []


def verdict_table_head(comparison: dict) -> tuple[str, str]:
    from compare.render.tables import verdict as table_verdict

    return table_verdict({"comparison": comparison})


def test_a_pair_with_an_unfinished_pretraining_is_unsettled_with_the_command_that_gives_pretraining_more_room():
    pretrained = rising_run([0.50, 0.56, 0.55], "budget", steps=2000)
    pretraining = {
        "objective": "masked language modelling",
        "steps": 1400,
        "texts": 6000,
        "passes": 1.5,
        "stop_reason": "time",
        "budget": {"epochs": 3.0, "steps": None, "time_budget_minutes": 4},
        "history": [
            {"epoch": 1, "loss": 6.5, "steps": 1200, "val_loss": 6.4},
            {"epoch": 2, "loss": 6.0, "steps": 1400, "val_loss": 6.0, "val_loss_drop_se": 0.02},
        ],
    }
    pretrained.pretraining = Section(**pretraining)
    runs = {"scratch-pretrained": pretrained, "scratch": rising_run([0.50, 0.56, 0.55], "budget", steps=2000)}
    found = {name: diagnose(run, {"accuracy": 0.55}, {}) for name, run in runs.items()}
    pair = {"a": "scratch-pretrained", "b": "scratch", "winner": "scratch"}  # an entry of `comparisons`
    settle(pair, found, runs, Path("/tmp/report"))
    assert pair["winner"] is None and pair["unsettled"]["models"] == ["scratch-pretrained"]
    assert pair["unsettled"]["command"].endswith(
        "--side-args 'scratch-pretrained=--pretrain-epochs 6 --pretrain-time-budget 8'"
    )
    assert "verdict" not in pair
