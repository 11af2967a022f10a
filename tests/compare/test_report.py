from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, f1_score

from compare.render.figures import all_figures
from compare.report.command import ReportArguments, build_report, main
from compare.report.results import read_predictions
from compare.scoring.statistics import StatisticsArguments
from core.rundir import RunError
from tests.compare.fakes import LABELS, fake_loader, fake_run, tiny_data, write_split

STATS = StatisticsArguments(bootstrap_resamples=200)


@pytest.fixture
def pair(tmp_path: Path):
    data = tiny_data(tmp_path / "data")
    runs = [fake_run(tmp_path / "runs" / side, side, data) for side in ("finetune", "scratch")]
    return data, runs


def no_figures(models: dict, baselines: dict, labels: list[str]) -> dict[str, bytes]:
    return {"confusion_matrices.png": b"\x89PNG stand-in"}


def report(runs, out: Path, loader, draw=no_figures, **kwargs) -> dict:
    args = ReportArguments(runs=[str(r) for r in runs], output_dir=str(out), latency_samples=3, **kwargs)
    return build_report(args, STATS, loader=loader, draw=draw)


def test_results_recompute_from_predictions_and_every_file_is_written(tmp_path: Path, pair) -> None:
    data, runs = pair
    out = tmp_path / "report"
    results = report(runs, out, fake_loader({"finetune": 0.9, "scratch": 0.6}, data), draw=all_figures)
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["report.md", "report.html", "results.json", "predictions.jsonl", "report_files.json"]
        + ["confusion_matrices.png", "reliability.png", "per_class_f1.png", "accuracy_vs_cost.png"]
    )
    assert not (tmp_path / "report.partial").exists()
    saved = json.loads((out / "results.json").read_text())
    assert saved["schema_version"] == 1 and saved["n"] == 240 and saved["split"] == "test"
    assert saved["comparison"] == json.loads(json.dumps(results["comparison"]))
    rows = read_predictions(out / "predictions.jsonl")
    assert len(rows) == 240
    gold = [r["gold"] for r in rows]
    for name in ("finetune", "scratch"):
        pred = [r["predictions"][name]["label"] for r in rows]
        assert saved["models"][name]["accuracy"] == pytest.approx(accuracy_score(gold, pred))
        assert saved["models"][name]["macro_f1"] == pytest.approx(f1_score(gold, pred, labels=LABELS, average="macro"))
        assert all(abs(sum(r["predictions"][name]["probs"].values()) - 1) < 1e-4 for r in rows)
        lo, hi = saved["models"][name]["accuracy_ci"]
        assert lo < saved["models"][name]["accuracy"] < hi
    diff = saved["models"]["finetune"]["accuracy"] - saved["models"]["scratch"]["accuracy"]
    assert saved["comparison"]["accuracy_diff"] == pytest.approx(diff)
    assert saved["comparison"]["winner"] == "finetune"  # 0.9 against 0.6 on 240 examples
    assert saved["models"]["scratch"]["params"] == 1000 and saved["models"]["finetune"]["train_seconds"] == 60.0
    assert saved["models"]["finetune"]["disk_bytes"] >= 2048
    assert set(saved["baselines"]) == {"majority", "tfidf_logreg"}
    assert saved["baselines"]["majority"]["accuracy"] == pytest.approx(1 / 3)
    assert saved["settings"]["bootstrap_resamples"] == 200 and saved["settings"]["ece_bins"] == 15


def test_html_is_self_contained_and_leads_with_the_verdict(tmp_path: Path, pair) -> None:
    data, runs = pair
    report(runs, tmp_path / "report", fake_loader({"finetune": 0.7, "scratch": 0.7}, data), draw=all_figures)
    page = (tmp_path / "report" / "report.html").read_text()
    assert page.count("data:image/png;base64,") == 4
    assert "http://" not in page and "https://" not in page and "<script" not in page
    assert page.index('class="verdict') < page.index("<table")
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "![Confusion matrices](confusion_matrices.png)" in markdown
    for png in (tmp_path / "report").glob("*.png"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_each_seed_is_scored_with_its_own_run_and_summarised(tmp_path: Path) -> None:
    from core.data import load_task

    # Seeds far apart, and pointing opposite ways, so that scoring one run for every seed cannot pass.
    wanted = {("finetune", 1): 0.95, ("finetune", 2): 0.70, ("scratch", 1): 0.60, ("scratch", 2): 0.85}
    runs = []
    for seed in (1, 2):
        data = tiny_data(tmp_path / "data", seed=seed)  # the same files; only the training seed differs
        for side in ("finetune", "scratch"):
            runs.append(fake_run(tmp_path / "runs" / f"{side}-seed{seed}", side, data))
    loader = fake_loader({f"{side}-seed{seed}": a for (side, seed), a in wanted.items()}, data)
    results = report(runs, tmp_path / "report", loader)

    task = load_task(data)
    texts, gold = task.texts("test"), task.label_ids("test")
    for side in ("finetune", "scratch"):
        own = [loader(tmp_path / "runs" / f"{side}-seed{seed}").predict_proba(texts).argmax(axis=1) for seed in (1, 2)]
        seeds = results["seeds"][side]
        assert seeds["seeds"] == [1, 2]
        assert seeds["runs"] == [str(tmp_path / "runs" / f"{side}-seed{seed}") for seed in (1, 2)]
        assert seeds["accuracy"] == pytest.approx([accuracy_score(gold, pred) for pred in own])
        assert seeds["macro_f1"] == pytest.approx([f1_score(gold, pred, average="macro") for pred in own])
        assert seeds["accuracy_mean"] == pytest.approx(np.mean(seeds["accuracy"]))
        assert seeds["accuracy_std"] == pytest.approx(np.std(seeds["accuracy"], ddof=1))
        assert results["models"][side]["seed"] == 1  # the primary run is the first seed
        assert results["models"][side]["accuracy"] == pytest.approx(accuracy_score(gold, own[0]))
    diffs = results["comparison"]["seed_accuracy_diffs"]
    assert diffs == pytest.approx(
        [a - b for a, b in zip(results["seeds"]["finetune"]["accuracy"], results["seeds"]["scratch"]["accuracy"])]
    )
    assert diffs[0] > 0 > diffs[1] and results["comparison"]["winner"] is None  # the seeds disagree
    page = (tmp_path / "report" / "report.html").read_text()
    assert "Across training seeds" in page and "accuracy % over 2 seeds (mean ± sd)" in page


def test_a_missing_or_half_written_run_is_refused_and_leaves_no_report(tmp_path: Path, pair) -> None:
    data, runs = pair
    loader = fake_loader({"finetune": 0.9, "scratch": 0.6}, data)
    out = tmp_path / "report"
    with pytest.raises(RunError, match="missing does not exist"):
        report([runs[0], tmp_path / "missing"], out, loader)
    half = tmp_path / "half"
    half.mkdir()
    (half / "weights.bin").write_bytes(b"1")
    with pytest.raises(RunError, match="half is not a finished run"):
        report([runs[0], half], out, loader)
    (half / "run.json").write_text('{"schema_version": 1, "side": "scr')
    with pytest.raises(RunError, match="not valid JSON"):
        report([runs[0], half], out, loader)
    assert not out.exists() and not (tmp_path / "report.partial").exists()


def test_runs_with_different_labels_or_test_splits_are_refused_naming_both(tmp_path: Path, pair) -> None:
    data, runs = pair
    loader = fake_loader({"finetune": 0.9, "scratch": 0.6, "other": 0.5}, data)
    other_data = tiny_data(tmp_path / "other-data", n_test=200)
    other = fake_run(tmp_path / "other", "scratch", other_data)
    with pytest.raises(RunError, match=rf"{runs[0]} and {other} saw different test splits"):
        report([runs[0], other], tmp_path / "report", loader)
    relabelled = fake_run(tmp_path / "relabelled", "scratch", data, data={"labels": ["a", "b", "c"]})
    with pytest.raises(RunError, match=rf"{runs[0]} and {relabelled} have different label sets"):
        report([runs[0], relabelled], tmp_path / "report", loader)
    assert not (tmp_path / "report").exists()


def test_a_split_without_labels_is_refused(tmp_path: Path, pair) -> None:
    data, runs = pair
    loader = fake_loader({"finetune": 0.9, "scratch": 0.6}, data)
    with pytest.raises(RunError, match="no labelled 'train2' split"):
        report(runs, tmp_path / "report", loader, split="train2")
    write_split(Path(data.test_file), 240, 2000, with_labels=False)  # the labels are gone since training
    with pytest.raises(RunError, match="test split of .* has no labels now"):
        report(runs, tmp_path / "report", loader)
    assert not (tmp_path / "report").exists()


def test_a_report_into_a_compare_run_directory_keeps_its_runs(tmp_path: Path) -> None:
    data = tiny_data(tmp_path / "data")
    out = tmp_path / "out"
    runs = [fake_run(out / "runs" / side, side, data) for side in ("finetune", "scratch")]
    loader = fake_loader({"finetune": 0.9, "scratch": 0.6}, data)
    report(runs, out, loader)
    (out / "stale.png").write_bytes(b"x")
    json.dump({"files": ["stale.png"]}, (out / "report_files.json").open("w"))
    report(runs, out, loader)
    assert (out / "runs" / "finetune" / "run.json").is_file() and (out / "results.json").is_file()
    assert not (out / "stale.png").exists()


def test_main_reports_errors_as_one_line_and_exit_code(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--runs", str(tmp_path / "a"), str(tmp_path / "b"), "--output-dir", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.startswith("error: ") and err.count("\n") == 1 and "a does not exist" in err
    assert not (tmp_path / "r").exists()


def test_a_report_reads_its_data_once_with_the_largest_train_split(tmp_path: Path, monkeypatch) -> None:
    import dataclasses

    from compare.report import runs as report_runs

    data = tiny_data(tmp_path / "data")
    small = dataclasses.replace(data, max_train_samples=120)  # as the quick profile gives finetune a subset
    runs = [
        fake_run(tmp_path / "runs" / "finetune", "finetune", small),
        fake_run(tmp_path / "runs" / "scratch", "scratch", data),
    ]
    loads = []
    real_load = report_runs.load_task
    monkeypatch.setattr(report_runs, "load_task", lambda options: loads.append(options) or real_load(options))
    results = report(runs, tmp_path / "report", fake_loader({"finetune": 0.9, "scratch": 0.6}, data))
    assert loads == [data]
    assert results["data"]["baseline_train_rows"] == 300 and results["models"]["finetune"]["train_rows"] == 120
    assert "trained on different train subsets" in results["data"]["notes"][0]


def test_test_texts_seen_in_train_are_noted(tmp_path: Path) -> None:
    data = tiny_data(tmp_path / "data")
    write_split(Path(data.test_file), 240, 150)  # rows 0..149 repeat train rows 150..299, text and label
    runs = [fake_run(tmp_path / "runs" / side, side, data) for side in ("finetune", "scratch")]
    results = report(runs, tmp_path / "report", fake_loader({"finetune": 0.9, "scratch": 0.6}, data))
    assert results["data"]["notes"] == [
        "150 of 240 test texts (62.5%) also occur in the train split; models can answer those from memory, so "
        "their scores may overstate performance on new text."
    ]
    assert "150 of 240 test texts (62.5%)" in (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
