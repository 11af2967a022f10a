"""A report whose runs call for a diagnosis shows it everywhere: results.json, the verdict, report.md, report.html,
the app's report view; and the training curves (figure, table, equal-time sentence) come from the runs' histories."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

from compare.diagnosis import equal_time_sentence, verdict_clause
from compare.render.figures import all_figures
from compare.report.command import ReportArguments, build_report
from compare.scoring.statistics import StatisticsArguments
from demo import report_view
from tests.compare.fakes import fake_loader, fake_run, tiny_data

STATS = StatisticsArguments(bootstrap_resamples=200)


def history(val_accuracies: list[float], seconds: list[float]) -> list[dict]:
    return [
        {
            "epoch": i + 1,
            "loss": 1.0 - 0.1 * i,
            "accuracy": a,
            "val_loss": 0.9 - 0.1 * i,
            "val_accuracy": a,
            "train_seconds": s,
        }
        for i, (a, s) in enumerate(zip(val_accuracies, seconds))
    ]


# A 4-class news task: scratch stopped by its budget within one epoch.
SCRATCH_TRAINING = {
    "history": history([0.47], [9.0]),
    "stop_reason": "budget",
    "steps": 53,
    "budget": {"min_steps": 0, "max_steps": 53},
    "epochs_run": 1,
    "seconds": 9.0,
}
FINETUNE_TRAINING = {
    "history": history([0.80, 0.86, 0.85], [20.0, 21.0, 19.0]),
    "stop_reason": "early_stopping",
    "epochs_run": 3,
    "seconds": 60.0,
}


@pytest.fixture
def diagnosed(tmp_path: Path) -> tuple[Path, dict]:
    data = tiny_data(tmp_path / "data")
    runs = [
        fake_run(tmp_path / "runs" / "finetune", "finetune", data, training=FINETUNE_TRAINING),
        fake_run(tmp_path / "runs" / "scratch", "scratch", data, training=SCRATCH_TRAINING),
    ]
    out = tmp_path / "report"
    args = ReportArguments(runs=[str(r) for r in runs], output_dir=str(out), latency_samples=3)
    build_report(args, STATS, loader=fake_loader({"finetune": 0.95, "scratch": 0.5}, data), draw=all_figures)
    return out, json.loads((out / "results.json").read_text())


def test_results_hold_each_models_findings_and_the_verdict_carries_them(diagnosed) -> None:
    _, results = diagnosed
    scratch, finetune = results["models"]["scratch"], results["models"]["finetune"]
    baseline = results["baselines"]["tfidf_logreg"]["accuracy"]
    scratch_codes = [f["code"] for f in scratch["diagnosis"]]
    assert scratch_codes == ["stopped_while_improving", "below_baseline"]  # 0.47 after one epoch, far below TF-IDF
    below = scratch["diagnosis"][1]["evidence"]
    assert below["shortfall"] == pytest.approx(baseline - scratch["accuracy"])
    stopped = scratch["diagnosis"][0]["evidence"]
    assert stopped["epochs"] == 1 and stopped["gain"] == pytest.approx(0.47 - 1 / len(results["labels"]))
    assert "stopped_while_improving" not in [f["code"] for f in finetune["diagnosis"]]  # early stopping ended it
    assert ("below_baseline" in [f["code"] for f in finetune["diagnosis"]]) == (finetune["accuracy"] < baseline)
    assert all(set(f) >= {"code", "message"} for m in results["models"].values() for f in m["diagnosis"])
    clause = verdict_clause({name: m["diagnosis"] for name, m in results["models"].items()})
    assert "the from-scratch model stopped within its first epoch" in clause
    # scratch, behind, stopped while still improving: no winner, and the command that gives it twice the steps
    comparison = results["comparison"]
    assert comparison["winner"] is None and comparison["unsettled"]["behind"] == "scratch"
    assert comparison["verdict"].startswith("Unsettled: finetune leads scratch by") and clause in comparison["verdict"]
    assert comparison["verdict"].endswith("--side-args 'scratch=--max-steps 106'")


def test_report_md_html_and_app_show_a_section_per_model(diagnosed) -> None:
    out, results = diagnosed
    markdown, page = (out / "report.md").read_text(), (out / "report.html").read_text()
    shown = report_view.diagnosis(results)
    for name, model in results["models"].items():
        assert f"### Diagnosis of {name}" in markdown and f"### Diagnosis of {name}" in shown
        assert f"<h2>Diagnosis of {name}</h2>" in page
        for finding in model["diagnosis"]:
            assert f"| {finding['code']} | {finding['message']} |" in markdown
            assert f"| {finding['code']} | {finding['message']} |" in shown
            assert html.escape(finding["message"]) in page
    clause = results["comparison"]["verdict"].split(", but ", 1)[1]
    assert clause in markdown and html.escape(clause) in page and clause in report_view.verdict(results)
    assert page.index("Diagnosis of scratch") < page.index("Validation accuracy against training time")


def test_training_curves_are_drawn_tabled_and_compared_at_equal_time(diagnosed) -> None:
    out, results = diagnosed
    png = (out / "training_curves.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    markdown, page = (out / "report.md").read_text(), (out / "report.html").read_text()
    assert "](training_curves.png)" in markdown and page.count("data:image/png;base64,") == 5
    curves = results["training_curves"]["curves"]
    cumulative = [20.0, 41.0, 60.0]
    assert [p["seconds"] for p in curves["finetune"]] == pytest.approx(cumulative)
    assert [p["val_accuracy"] for p in curves["finetune"]] == [0.80, 0.86, 0.85]
    assert curves["scratch"] == [{"epoch": 1, "seconds": 9.0, "val_accuracy": 0.47}]
    sentence = results["training_curves"]["equal_time"]
    assert sentence == equal_time_sentence(curves)
    # scratch ended (9 s) before finetune's first epoch (20 s): the curves cannot be compared at equal time.
    assert "do not overlap" in sentence and sentence in markdown and html.escape(sentence) in page
    for seconds, accuracy in zip(cumulative, [80.0, 86.0, 85.0]):
        row = f"| {seconds:.1f} | {accuracy:.1f} |"
        assert row in markdown and row in report_view.training_time(results)


def test_unstable_across_seeds_uses_the_per_seed_test_accuracies(tmp_path: Path) -> None:
    runs, wanted = [], {}
    for seed, (ft, sc) in zip((1, 2), ((0.95, 0.40), (0.93, 0.75))):
        data = tiny_data(tmp_path / "data", seed=seed)
        for side, accuracy in (("finetune", ft), ("scratch", sc)):
            runs.append(fake_run(tmp_path / "runs" / f"{side}-seed{seed}", side, data))
            wanted[f"{side}-seed{seed}"] = accuracy
    args = ReportArguments(runs=[str(r) for r in runs], output_dir=str(tmp_path / "report"), latency_samples=3)
    results = build_report(args, STATS, loader=fake_loader(wanted, data), draw=lambda *a: {})
    per_seed = results["seeds"]["scratch"]["accuracy"]
    unstable = [f for f in results["models"]["scratch"]["diagnosis"] if f["code"] == "unstable_across_seeds"]
    assert len(unstable) == 1 and unstable[0]["evidence"]["spread"] == pytest.approx(max(per_seed) - min(per_seed))
    assert "varies by" in results["comparison"]["verdict"]
    assert "training_curves.png" not in [p.name for p in (tmp_path / "report").iterdir()]  # no history, no figure
