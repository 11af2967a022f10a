"""Reports of multi-label and regression (pair) tasks: every score equals scikit-learn's or SciPy's on the predictions
the report wrote, the comparison is the kind's, and each report renders its own tables and figures."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import (
    accuracy_score,
    f1_score,
    hamming_loss,
    mean_absolute_error,
    mean_squared_error,
    precision_score,
    recall_score,
)
from sklearn.preprocessing import MultiLabelBinarizer

from compare.render.figures import all_figures
from compare.report.command import ReportArguments, build_report
from compare.report.results import read_predictions
from compare.scoring.baselines import tfidf_logreg
from compare.scoring.statistics import StatisticsArguments
from core.args import DataArguments
from core.data import load_task
from core.rundir import RunError
from tests.compare.fakes import (
    EMOTIONS,
    fake_loader,
    fake_run,
    multilabel_data,
    pair_regression_data,
    tiny_data,
    write_rows,
)

STATS = StatisticsArguments(bootstrap_resamples=200)
SCRATCH_THRESHOLDS = [0.3, 0.6, 0.7]  # not 0.5: the scratch model decides each label by its own cut
PNG = b"\x89PNG\r\n\x1a\n"


def report(runs: list[Path], out: Path, loader, names=None) -> dict:
    args = ReportArguments(runs=[str(r) for r in runs], output_dir=str(out), latency_samples=2, names=names)
    return build_report(args, STATS, loader=loader, draw=all_figures)


@pytest.fixture(scope="module")
def multilabel(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("multilabel")
    data = multilabel_data(root / "data")
    runs = [
        fake_run(root / "runs" / "finetune", "finetune", data),
        fake_run(root / "runs" / "scratch", "scratch", data, thresholds=SCRATCH_THRESHOLDS),
    ]
    loader = fake_loader({"finetune": 0.92, "scratch": 0.7}, data)
    results = report(runs, root / "report", loader)
    return {"data": data, "runs": runs, "loader": loader, "results": results, "out": root / "report"}


@pytest.fixture(scope="module")
def regression(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("regression")
    data = pair_regression_data(root / "data")
    runs = [fake_run(root / "runs" / side, side, data) for side in ("finetune", "scratch")]
    loader = fake_loader({"finetune": 0.95, "scratch": 0.6}, data)
    results = report(runs, root / "report", loader)
    return {"data": data, "runs": runs, "loader": loader, "results": results, "out": root / "report"}


def indicator(rows: list[list[str]]) -> np.ndarray:
    return MultiLabelBinarizer(classes=EMOTIONS).fit_transform(rows)


def test_multilabel_scores_equal_scikit_learns_on_the_written_predictions(multilabel) -> None:
    saved = json.loads((multilabel["out"] / "results.json").read_text())
    assert (saved["problem_type"], saved["headline_metric"], saved["labels"]) == (
        "multi_label_classification",
        "macro_f1",
        EMOTIONS,
    )
    rows = read_predictions(multilabel["out"] / "predictions.jsonl")
    gold = indicator([row["gold"] for row in rows])
    for name in ("finetune", "scratch"):
        pred = indicator([row["predictions"][name]["label"] for row in rows])
        model = saved["models"][name]
        assert model["micro_f1"] == pytest.approx(f1_score(gold, pred, average="micro", zero_division=0))
        assert model["macro_f1"] == pytest.approx(f1_score(gold, pred, average="macro", zero_division=0))
        assert model["hamming_loss"] == pytest.approx(hamming_loss(gold, pred))
        assert model["subset_accuracy"] == pytest.approx(accuracy_score(gold, pred))
        per_label = [model["per_class"][label] for label in EMOTIONS]
        np.testing.assert_allclose([c["f1"] for c in per_label], f1_score(gold, pred, average=None, zero_division=0))
        np.testing.assert_allclose([c["precision"] for c in per_label], precision_score(gold, pred, average=None))
        np.testing.assert_allclose([c["recall"] for c in per_label], recall_score(gold, pred, average=None))
        assert [c["support"] for c in per_label] == gold.sum(axis=0).tolist()
        lo, hi = model["macro_f1_ci"]
        assert lo < model["macro_f1"] < hi
    comparison = saved["comparison"]
    diff = saved["models"]["finetune"]["macro_f1"] - saved["models"]["scratch"]["macro_f1"]
    assert comparison["macro_f1_diff"] == pytest.approx(diff)
    assert "mcnemar_p" not in comparison and 0 < comparison["bootstrap_p"] <= 2 / (STATS.bootstrap_resamples + 1)
    assert comparison["winner"] == "finetune" and "points of macro-F1" in comparison["verdict"]
    assert set(saved["baselines"]) == {"no_labels", "tfidf_one_vs_rest"}
    assert saved["baselines"]["no_labels"]["subset_accuracy"] == pytest.approx(np.mean(gold.sum(axis=1) == 0))


def test_each_model_decides_by_its_own_thresholds(multilabel) -> None:
    saved = multilabel["results"]
    assert saved["models"]["scratch"]["thresholds"] == SCRATCH_THRESHOLDS
    task = load_task(multilabel["data"])
    for name, run in zip(("finetune", "scratch"), multilabel["runs"]):
        model = multilabel["loader"](run)
        probs = model.predict_proba(task.texts("test"))
        chosen = probs >= np.array(json.loads((run / "run.json").read_text())["thresholds"])
        rows = read_predictions(multilabel["out"] / "predictions.jsonl")
        assert [row["predictions"][name]["label"] for row in rows] == [
            [label for label, on in zip(EMOTIONS, row) if on] for row in chosen
        ]


def test_per_label_calibration_error_is_each_labels_own(multilabel) -> None:
    rows = read_predictions(multilabel["out"] / "predictions.jsonl")
    gold = indicator([row["gold"] for row in rows])
    bins = STATS.ece_bins
    for name, model in multilabel["results"]["models"].items():
        probs = np.array([[row["predictions"][name]["probs"][label] for label in EMOTIONS] for row in rows])
        for k, label in enumerate(EMOTIONS):
            confidence = np.maximum(probs[:, k], 1 - probs[:, k])  # of the more likely answer, yes or no
            right = (probs[:, k] >= 0.5) == (gold[:, k] == 1)
            which = np.minimum((confidence * bins).astype(int), bins - 1)
            ece = sum(
                (which == b).mean() * abs(right[which == b].mean() - confidence[which == b].mean())
                for b in range(bins)
                if (which == b).any()
            )
            assert model["per_class"][label]["ece"] == pytest.approx(ece, abs=1e-5)
        assert model["ece"] == pytest.approx(np.mean([model["per_class"][label]["ece"] for label in EMOTIONS]))


def test_a_multilabel_report_renders_its_tables_and_figures(multilabel) -> None:
    out = multilabel["out"]
    figures = {"macro_f1_vs_cost.png", "reliability.png", "per_label_f1.png"}
    assert figures <= {p.name for p in out.iterdir()} and not (out / "confusion_matrices.png").exists()
    assert all((out / name).read_bytes()[:8] == PNG for name in figures)
    markdown, page = (out / "report.md").read_text(), (out / "report.html").read_text()
    for heading in ("### Quality on the test split", "### Per label", "### finetune minus scratch"):
        assert heading in markdown
    assert "Task: multi-label classification (3 labels), ranked by macro-F1." in markdown
    assert "| model | macro-F1 % [95% CI] | micro-F1 % [95% CI] | subset accuracy % | Hamming loss %" in markdown
    assert "0.300 / " in markdown  # scratch's threshold of the first label, in the per-label table
    assert "Paired bootstrap test of the macro-F1 difference" in markdown
    assert page.count("data:image/png;base64,") == 3 and "<h2>Per label</h2>" in page


def test_regression_scores_equal_scipys_on_the_written_predictions(regression) -> None:
    saved = json.loads((regression["out"] / "results.json").read_text())
    assert (saved["problem_type"], saved["headline_metric"], saved["labels"]) == ("regression", "spearman", [])
    assert saved["columns"] == {"text": ["sentence1"], "text_pair": "sentence2"}
    rows = read_predictions(regression["out"] / "predictions.jsonl")
    gold = np.array([row["gold"] for row in rows])
    for name in ("finetune", "scratch"):
        values = np.array([row["predictions"][name]["value"] for row in rows])
        model = saved["models"][name]
        assert model["spearman"] == pytest.approx(spearmanr(gold, values).statistic, abs=1e-6)
        assert model["pearson"] == pytest.approx(pearsonr(gold, values).statistic, abs=1e-6)
        assert model["mse"] == pytest.approx(mean_squared_error(gold, values), abs=1e-5)
        assert model["mae"] == pytest.approx(mean_absolute_error(gold, values), abs=1e-5)
        assert "ece" not in model and "reliability" not in model
    comparison = saved["comparison"]
    diff = saved["models"]["finetune"]["spearman"] - saved["models"]["scratch"]["spearman"]
    assert comparison["spearman_diff"] == pytest.approx(diff)
    assert comparison["winner"] == "finetune" and "in Spearman" in comparison["verdict"]
    assert "paired bootstrap p" in comparison["verdict"] and comparison["disagreements"] is None
    assert set(saved["baselines"]) == {"train_mean", "tfidf_ridge", "tfidf_cosine"}
    task = load_task(regression["data"])
    train_mean = task.targets("train").mean()
    assert saved["baselines"]["train_mean"]["mse"] == pytest.approx(
        mean_squared_error(gold, np.full(len(gold), train_mean))
    )


def test_a_regression_report_renders_its_scatter_and_says_there_is_no_calibration(regression) -> None:
    out = regression["out"]
    assert {p.name for p in out.glob("*.png")} == {"spearman_vs_cost.png", "predicted_vs_gold.png"}
    assert all(path.read_bytes()[:8] == PNG for path in out.glob("*.png"))
    markdown, page = (out / "report.md").read_text(), (out / "report.html").read_text()
    columns = "each input is a pair of texts, from the columns sentence1 and sentence2"
    assert columns in markdown and columns in page
    assert "No calibration: a regression model gives values, not probabilities" in markdown
    assert "| model | Spearman [95% CI] | Pearson [95% CI] | MSE | MAE |" in markdown
    assert "### Where the models differ most" in markdown and "### Largest errors of scratch" in markdown
    assert "| text | second text | gold | finetune | scratch |" in markdown
    assert "![Predicted against gold values](predicted_vs_gold.png)" in markdown and "Per class" not in markdown


@pytest.mark.parametrize("kind", ["multilabel", "regression"])
def test_predictions_jsonl_holds_each_models_outputs_for_every_input(kind, request) -> None:
    setup = request.getfixturevalue(kind)
    task = load_task(setup["data"])
    rows = read_predictions(setup["out"] / "predictions.jsonl")
    assert [row["text"] for row in rows] == task.texts("test")
    assert [row.get("text_pair") for row in rows] == (task.text_pairs("test") or [None] * len(rows))
    for name, run in zip(("finetune", "scratch"), setup["runs"]):
        model = setup["loader"](run)
        if kind == "regression":
            values = model.predict_values(task.texts("test"), task.text_pairs("test"))
            np.testing.assert_allclose([row["predictions"][name]["value"] for row in rows], values, atol=1e-6)
            assert [row["gold"] for row in rows] == pytest.approx(task.targets("test").tolist())
        else:
            probs = model.predict_proba(task.texts("test"))
            written = [[row["predictions"][name]["probs"][label] for label in EMOTIONS] for row in rows]
            np.testing.assert_allclose(written, probs, atol=1e-6)
            assert indicator([row["gold"] for row in rows]).tolist() == task.targets("test").astype(int).tolist()


def test_regression_seeds_are_scored_by_spearman_each(tmp_path: Path) -> None:
    wanted = {("finetune", 1): 0.95, ("finetune", 2): 0.9, ("scratch", 1): 0.5, ("scratch", 2): 0.6}
    runs = []
    for seed in (1, 2):
        data = pair_regression_data(tmp_path / "data", seed=seed)
        runs += [fake_run(tmp_path / "runs" / f"{side}-seed{seed}", side, data) for side in ("finetune", "scratch")]
    loader = fake_loader({f"{side}-seed{seed}": q for (side, seed), q in wanted.items()}, data)
    results = report(runs, tmp_path / "report", loader)
    task = load_task(data)
    gold = task.targets("test")
    for side in ("finetune", "scratch"):
        values = [
            loader(tmp_path / "runs" / f"{side}-seed{seed}").predict_values(task.texts("test"), task.text_pairs("test"))
            for seed in (1, 2)
        ]
        assert results["seeds"][side]["spearman"] == pytest.approx([spearmanr(gold, v).statistic for v in values])
        assert results["seeds"][side]["pearson"] == pytest.approx([pearsonr(gold, v).statistic for v in values])
    assert results["comparison"]["seed_spearman_diffs"] == pytest.approx(
        [a - b for a, b in zip(results["seeds"]["finetune"]["spearman"], results["seeds"]["scratch"]["spearman"])]
    )
    assert "every one of 2 seeds" in results["comparison"]["verdict"]
    assert (
        "| model | seeds | Spearman per seed | Spearman mean ± sd | Pearson mean ± sd |"
        in (tmp_path / "report" / "report.md").read_text()
    )


def test_the_history_of_the_headline_draws_the_curves_and_feeds_the_diagnosis(tmp_path: Path) -> None:
    data = pair_regression_data(tmp_path / "data")
    history = [
        {"epoch": e, "loss": 1.0 / e, "val_loss": 0.9 / e, "val_spearman": s, "train_seconds": 10.0}
        for e, s in ((1, 0.3), (2, 0.5), (3, 0.85))  # a last rise above the score's noise on the few validation pairs
    ]
    training = {"history": history, "stop_reason": "budget", "steps": 90, "epochs_run": 3, "seconds": 30.0}
    runs = [
        fake_run(tmp_path / "runs" / "finetune", "finetune", data),
        fake_run(tmp_path / "runs" / "scratch", "scratch", data, training=training),
    ]
    results = report(runs, tmp_path / "report", fake_loader({"finetune": 0.95, "scratch": 0.6}, data))
    curves = results["training_curves"]
    assert curves["metric"] == "val_spearman" and curves["curves"]["finetune"] == []
    assert [p["val_spearman"] for p in curves["curves"]["scratch"]] == [0.3, 0.5, 0.85]
    found = {f["code"]: f for f in results["models"]["scratch"]["diagnosis"]}
    stopped = found["stopped_while_improving"]
    assert stopped["evidence"]["gain"] == pytest.approx(0.35) and stopped["evidence"]["metric"] == "spearman"
    assert "validation Spearman was still rising: 0.500 to 0.850, +0.350 in its last epoch" in stopped["message"]
    assert "stopped while still improving (+0.350 in its last epoch)" in results["comparison"]["verdict"]
    assert (tmp_path / "report" / "training_curves.png").read_bytes()[:8] == PNG
    assert "### Validation Spearman against training time" in (tmp_path / "report" / "report.md").read_text()


def test_leakage_counts_a_test_pair_only_when_both_texts_occur_in_train(tmp_path: Path) -> None:
    data = pair_regression_data(tmp_path / "data")
    task = load_task(data)
    train = list(zip(task.texts("train"), task.text_pairs("train"), task.targets("train")))
    repeated = [(a, b, s) for a, b, s in train[:30]]  # whole pairs seen in train
    half = [(a, f"unseen second text {i}", s) for i, (a, _, s) in enumerate(train[30:50])]  # only the first text
    fresh = [(f"fresh {i}", f"new {i}", float(i % 6)) for i in range(50)]
    write_rows(Path(data.test_file), ["sentence1", "sentence2", "score"], repeated + half + fresh)
    runs = [fake_run(tmp_path / "runs" / side, side, data) for side in ("finetune", "scratch")]
    results = report(runs, tmp_path / "report", fake_loader({"finetune": 0.9, "scratch": 0.6}, data))
    assert results["data"]["notes"] == [
        "30 of 100 test text pairs (30.0%) also occur in the train split; models can answer those from memory, so "
        "their scores may overstate performance on new text."
    ]


def test_three_regression_models_are_compared_in_pairs_and_the_gap_is_in_spearman(tmp_path: Path) -> None:
    data = pair_regression_data(tmp_path / "data")
    names = ("finetune", "scratch", "scratch-distilled")
    runs = [fake_run(tmp_path / "runs" / name, name.split("-")[0], data) for name in names]
    quality = {"finetune": 0.95, "scratch": 0.5, "scratch-distilled": 0.8}
    results = report(runs, tmp_path / "report", fake_loader(quality, data), names=list(names))
    spearman = {name: results["models"][name]["spearman"] for name in names}
    gap = results["gap_closed"]
    expected = (spearman["scratch-distilled"] - spearman["scratch"]) / (spearman["finetune"] - spearman["scratch"])
    assert gap["metric"] == "spearman" and gap["value"] == pytest.approx(expected)
    assert gap["scores"] == pytest.approx({"finetune": spearman["finetune"], "scratch": spearman["scratch"],
                                           "distilled": spearman["scratch-distilled"]})  # fmt: skip
    pairs = results["comparisons"]
    assert [(p["a"], p["b"]) for p in pairs] == [(names[0], names[1]), (names[0], names[2]), (names[1], names[2])]
    assert all(p["bootstrap_p_holm"] >= p["bootstrap_p"] for p in pairs)
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "| pair | Spearman diff | 95% CI | Pearson diff | paired bootstrap p | Holm p | winner |" in markdown


def test_runs_of_different_kinds_are_refused(tmp_path: Path) -> None:
    single = fake_run(tmp_path / "runs" / "finetune", "finetune", tiny_data(tmp_path / "single"))
    multi = fake_run(tmp_path / "runs" / "scratch", "scratch", multilabel_data(tmp_path / "multi"))
    with pytest.raises(RunError, match="solve different kinds of task: single_label_classification versus multi_label"):
        report([single, multi], tmp_path / "report", loader=None)
    assert not (tmp_path / "report").exists()


def test_a_single_label_pair_task_reads_both_texts_everywhere(tmp_path: Path) -> None:
    animals = ["cat", "dog", "owl", "fox", "eel", "yak"]

    def write(name: str, n: int, offset: int) -> str:
        rng, rows = random.Random(offset), []
        for i in range(n):  # half the pairs name the same animal twice: a label neither text gives alone
            first = rng.choice(animals)
            second = first if rng.random() < 0.5 else rng.choice([a for a in animals if a != first])
            label = "same" if first == second else "different"
            rows.append((f"{offset + i} the {first} sat", f"a {second} ran {offset + i}", label))
        return str(write_rows(tmp_path / name, ["premise", "hypothesis", "label"], rows))

    data = DataArguments(
        train_file=write("train.csv", 300, 0),
        validation_file=write("validation.csv", 60, 1000),
        test_file=write("test.csv", 120, 2000),
        text_column=["premise"],
        text_pair_column="hypothesis",
    )
    runs = [fake_run(tmp_path / "runs" / side, side, data) for side in ("finetune", "scratch")]
    results = report(runs, tmp_path / "report", fake_loader({"finetune": 0.9, "scratch": 0.6}, data))
    assert results["columns"] == {"text": ["premise"], "text_pair": "hypothesis"}
    assert results["problem_type"] == "single_label_classification" and "mcnemar_p" in results["comparison"]
    rows = read_predictions(tmp_path / "report" / "predictions.jsonl")
    task = load_task(data)
    assert [(row["text"], row["text_pair"]) for row in rows] == task.inputs("test")
    gold, gold_ids = [row["gold"] for row in rows], task.targets("test")
    for name in ("finetune", "scratch"):
        pred = [row["predictions"][name]["label"] for row in rows]
        assert results["models"][name]["accuracy"] == pytest.approx(accuracy_score(gold, pred))
    first_only = tfidf_logreg(
        (task.texts("train"), None, task.targets("train")), (task.texts("test"), None, gold_ids), 2
    )
    assert results["baselines"]["tfidf_logreg"]["accuracy"] > first_only["accuracy"] + 0.1  # it read both texts


def test_a_single_label_report_records_its_kind(tmp_path: Path) -> None:
    data = tiny_data(tmp_path / "data")
    runs = [fake_run(tmp_path / "runs" / side, side, data) for side in ("finetune", "scratch")]
    results = report(runs, tmp_path / "report", fake_loader({"finetune": 0.9, "scratch": 0.6}, data))
    assert (results["problem_type"], results["headline_metric"], results["columns"]) == (
        "single_label_classification",
        "accuracy",
        None,
    )
    assert results["training_curves"]["metric"] == "val_accuracy"
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "Task: single-label classification (3 classes), ranked by accuracy." in markdown
