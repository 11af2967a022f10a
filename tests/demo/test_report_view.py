"""The report tab says what compare's report says: the verdict, headline, curve and figure titles of reports and
curves that compare itself wrote, and the table of runs of each kind of task."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np

from compare.curve.command import write_curve
from compare.curve.points import catch_up_size
from compare.render.format import count
from demo import report_view, sources
from tests.demo.fakes import record_of, run_record


def table_rows(markdown: str) -> list[str]:
    return [line for line in markdown.splitlines() if line.startswith("| ") and not line.startswith("| model")]


def test_verdict_and_headline_are_the_reports_own(compared_report: Path) -> None:
    results = json.loads((compared_report / "results.json").read_text())
    report_md = (compared_report / "report.md").read_text()
    verdict = report_view.verdict(results)
    comparison = results["comparison"]
    sentence = comparison["verdict"].removeprefix("No clear winner: ")
    assert verdict in report_md and verdict.endswith(sentence[1:])
    assert (f"{comparison['winner']} wins" if comparison["winner"] else "No clear winner") in verdict
    headline = report_view.headline(results)
    assert table_rows(headline) and all(row in report_md for row in table_rows(headline))
    rows = [json.loads(line) for line in (compared_report / "predictions.jsonl").read_text().splitlines()]
    for name, model in results["models"].items():  # the accuracy shown, recomputed from the predictions
        accuracy = np.mean([row["predictions"][name]["label"] == row["gold"] for row in rows])
        lo, hi = model["accuracy_ci"]
        assert f"| {name} | {accuracy * 100:.1f} [{lo * 100:.1f}, {hi * 100:.1f}] |" in headline
    assert report_view.verdict({"models": {}}) == "The report holds no comparison of two models."


def test_figure_titles_are_the_reports_captions(compared_report: Path) -> None:
    report_md = (compared_report / "report.md").read_text()
    figures = sorted(compared_report.glob("*.png"))
    names = [path.name for path in figures]  # with the reliability diagram before calibration
    assert len(figures) == 6 and {"training_curves.png", "reliability_uncalibrated.png"} <= set(names)
    for path in figures:
        assert f"![{report_view.figure_title(path.name)}]({path.name})" in report_md
    assert report_view.figure_title("accuracy_by_model.png") == "Accuracy by model"
    assert report_view.figure_title("curve.png") == "Learning curve"


def test_diagnosis_and_training_time_are_the_reports_own(compared_report: Path) -> None:
    results = json.loads((compared_report / "results.json").read_text())
    report_md = (compared_report / "report.md").read_text()
    diagnosis, training_time = report_view.diagnosis(results), report_view.training_time(results)
    for view in (diagnosis, training_time):
        assert table_rows(view) and all(row in report_md for row in table_rows(view))
    for name, model in results["models"].items():
        assert f"### Diagnosis of {name}" in diagnosis
        assert all(f"| {finding['code']} | {finding['message']} |" in diagnosis for finding in model["diagnosis"])
        epochs = results["training_curves"]["curves"][name]
        assert len(epochs) == model["epochs"] > 0  # one point per epoch the run recorded
        assert sum(row.startswith(f"| {name} |") for row in table_rows(training_time)) == len(epochs)
    assert results["training_curves"]["equal_time"] in training_time
    assert report_view.tuning(results) == ""  # compare report tunes nothing
    assert report_view.distillation(results) == ""  # two models: no pairs table, no gap
    older = {
        **results,
        "models": {n: {k: v for k, v in m.items() if k != "diagnosis"} for n, m in results["models"].items()},
    }
    del older["training_curves"]
    assert report_view.diagnosis(older) == "" and report_view.training_time(older) == ""


def test_curve_summary_is_the_curves_own_table(tmp_path: Path) -> None:
    accuracies = {("finetune", 500): [0.80, 0.82], ("scratch", 500): [0.60, 0.64], ("finetune", 2000): [0.85, 0.86]}
    accuracies[("scratch", 2000)] = [0.70, 0.71]
    points = [
        {"side": side, "size": size, "seed": seed, "accuracy": a, "macro_f1": a - 0.01, "train_seconds": 10.0}
        for (side, size), values in accuracies.items()
        for seed, a in enumerate(values)
    ]
    curve = {"split": "test", "source": "sst2", "sizes": [500, 2000], "seeds": [0, 1], "profile": "full"}
    curve |= {"points": points, "catch_up_size": catch_up_size(points)}
    write_curve(tmp_path, curve)
    summary = report_view.curve_summary(curve)
    curve_md = (tmp_path / "curve.md").read_text()
    assert table_rows(summary) and all(row in curve_md for row in table_rows(summary))
    ft, sc = accuracies[("finetune", 500)], accuracies[("scratch", 500)]
    spread = f"{np.mean(ft) * 100:.1f} ± {np.std(ft, ddof=1) * 100:.1f} ({min(ft) * 100:.1f}–{max(ft) * 100:.1f})"
    gap = f"{(np.mean(ft) - np.mean(sc)) * 100:+.1f}"
    assert f"| 500 | {spread} |" in summary
    assert any(row.startswith("| 500 |") and row.endswith(f"| {gap} |") for row in table_rows(summary))
    assert "never came within 1 point" in summary  # scratch stays 11 and more points behind


def test_runs_table_describes_each_run(tmp_path: Path) -> None:
    record = record_of(run_record("scratch"))
    table = report_view.runs_table({"scratch": record, "best": record_of(run_record("finetune"))})
    validation = record.validation
    expected = (
        f"| scratch | tiny-scratch | sst2 | 200 / 20 / 30 | 12.3k | 12 s | 3 (2) | {validation['accuracy'] * 100:.1f} "
        f"| {validation['macro_f1'] * 100:.1f} |"
    )
    assert expected in table
    assert "| best (finetune) |" in table
    assert report_view.checkpoint("/tmp/runs/tiny-bert") == "tiny-bert" and report_view.checkpoint("minilm") == "minilm"


def test_runs_table_shows_each_kind_s_validation_scores() -> None:
    multi = record_of(run_record("scratch", ["anger", "joy"], "multi_label_classification", thresholds=[0.4, 0.5]))
    table = report_view.runs_table({"scratch": multi})
    assert "| validation macro-F1 % | validation micro-F1 % |" in table
    assert table_rows(table)[-1].endswith("| 3 (2) | 61.3 | 66.1 |")
    regression = record_of(run_record("finetune", [], "regression", pairs=True))
    table = report_view.runs_table({"finetune": regression})
    assert "| validation Spearman | validation Pearson |" in table
    assert (
        table_rows(table)[-1]
        == "| finetune | tiny-finetune | pairs.csv | 200 / 20 / 30 | 12.3k | 12 s | 3 (2) | 0.814 | 0.802 |"
    )


def test_report_runs_are_named_as_in_the_report_and_loaded_ones_added(compared_report: Path, fakes: dict) -> None:
    report = sources.load_report(compared_report)
    described = report_view.report_runs(report, {})
    results = json.loads((compared_report / "results.json").read_text())
    assert {name: str(Path(path)) for name, path in results["runs"].items()} == {
        name: str(Path(results["runs"][name])) for name in described
    }
    assert {name: run.side for name, run in described.items()} == {"finetune": "finetune", "scratch": "scratch"}
    assert list(report_view.report_runs(None, fakes)) == ["finetune", "scratch"]


def test_a_translation_report_lists_its_models_and_references_with_their_scores(tmp_path: Path) -> None:
    from tests.demo.fakes import write_translation_report

    report = sources.load_report(write_translation_report(tmp_path / "report"))
    results = report.results
    assert report.is_translation
    scores = report_view.translation_scores(results)  # the translation report's own tables
    assert "| scratch | 21.4 [20.3, 22.6] | 44.6 [43.8, 45.4] | encoder-decoder |" in scores
    assert "| *bergamot* | *47.4 [46.4, 48.7]* | *68.4 [67.6, 69.2]* | *Bergamot pt-en; 0.2.0* |" in scores
    assert "| scratch | 186.9k | 2.0 MB | 95 s | 57/s | 14/s | 12.3 / 20.5 ms |" in scores
    differences = report_view.translation_comparisons(results)
    assert "| scratch − bergamot | -26.0 [-27.6, -24.5] | -23.8 [-25.0, -22.6] | 0.001 | bergamot |" in differences
    domains = report_view.translation_domains(results)
    assert "| domain | scratch | bergamot | copy_source |" in domains
    assert "| toy (n=3) | 19.9 / 42.3 | 45.9 / 66.2 | 0.6 / 21.7 |" in domains
    assert report_view.translation_comparisons({**results, "comparisons": []}) == ""
    from compare.translation.render import render_markdown

    report_md = render_markdown(results, [])  # the app shows the rows report.md has
    assert all(row in report_md for view in (scores, differences, domains) for row in table_rows(view))
    no_domains = {name: {**entry, "per_domain": {}} for name, entry in results["models"].items()}
    assert report_view.translation_domains({**results, "models": no_domains}) == ""
    runs = report_view.report_runs(report, {})
    assert list(runs) == ["scratch"] and runs["scratch"].task_kind == "translation"
    table = report_view.translation_runs_table(runs)
    run = runs["scratch"]
    splits = " / ".join(f"{run.data.splits[s]:,}" for s in ("train", "validation", "test"))
    training, validation = run.training, run.validation
    epochs = f"{training.epochs_run} ({training.best_epoch})"
    assert f"| scratch | encoder-decoder | pt_en | {splits} | {count(run.model.params)} |" in table
    assert f"| {epochs} | {validation['bleu']:.1f} | {validation['chrf']:.1f} |" in table
    taught = dataclasses.replace(run, distillation={"teacher": "/runs/mt-teacher", "kind": "sequence-level"})
    table = report_view.translation_runs_table({"scratch-distilled": taught})
    assert "| scratch-distilled | encoder-decoder, trained on mt-teacher's translations | pt_en |" in table


def test_the_report_tab_of_a_translation_report(tmp_path: Path) -> None:
    from demo import page
    from demo.translation import Bergamot
    from tests.demo.fakes import FakeTranslator, write_translation_report

    report = sources.load_report(write_translation_report(tmp_path / "report"))
    demo = page.build_demo({}, report, translators={"scratch": FakeTranslator()}, reference=Bergamot("nothing_here"))
    text = json.dumps(demo.get_config_file(), default=str, ensure_ascii=False)
    assert "## Translation quality" in text and "## Differences" in text and "## By domain" in text
    assert "## The translation runs" in text and "The report holds no comparison" not in text
    assert "lack" not in text  # no section fell back to "the report's files lack ..."
