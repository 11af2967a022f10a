"""The verdict's clause names each qualified model and quotes its findings' numbers."""

from __future__ import annotations

import pytest

from compare.diagnosis.findings import diagnose
from compare.diagnosis.verdict import finding_phrase, verdict_clause
from tests.compare.records import partial


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
