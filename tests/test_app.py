"""The demo's predict functions, report view, argument handling, and the server driven through gradio_client."""

from __future__ import annotations

import json
import os
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import app
from core.rundir import write_run_json

# Gradio 6.17 reads a status constant that its pinned Starlette deprecates, once per queued request.
pytestmark = pytest.mark.filterwarnings("ignore:'HTTP_422_UNPROCESSABLE_ENTITY' is deprecated")

LABELS = ["negative", "positive"]
POSITIVE_WORDS = {"great", "wonderful", "loved", "superb", "joy"}
NEGATIVE_WORDS = {"dull", "boring", "hated", "terrible", "waste"}
ODD_TEXTS = [
    "😀🎬🍿 !!! ???",
    "...,,,;;;:::!!!",
    "qwzx vbnm plok zzyzx",
    "Ünïcödé façade naïve coöperate — «quotes» „and“ ‚more‘",
    "这部电影非常好看 これは映画です هذا فيلم رائع",
    "tab\tnew\nline\r\x00null",
    "a" * 4999,
    "<script>alert('x')</script> **markdown** `code` [link](http://x)",
]


def run_record(side: str, labels: list[str] = LABELS) -> dict[str, Any]:
    """A complete run.json body (write_run_json adds the rest)."""
    return {
        "side": side,
        "model": {"name": "tiny-" + side, "source": "test", "params": 12_345, "trainable_params": 12_345},
        "data": {
            "options": {"task": "sst2", "max_length": 16},
            "labels": labels,
            "splits": {"train": 200, "validation": 20, "test": 30},
            "fingerprints": {"train": "x"},
        },
        "hyperparameters": {},
        "training": {"seconds": 12.5, "epochs_run": 3, "best_epoch": 2, "history": [], "examples_per_second": 40.0},
        "validation": {"accuracy": 0.85, "macro_f1": 0.8412},
    }


class FakeClassifier:
    """A bag-of-words stand-in with the Classifier interface: positive words push towards `positive`."""

    def __init__(self, side: str, labels: list[str] = LABELS) -> None:
        self.side = self.name = side
        self.labels = list(labels)
        self.run = run_record(side, self.labels)

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        words = [text.lower().split() for text in texts]
        score = np.array([sum((w in POSITIVE_WORDS) - (w in NEGATIVE_WORDS) for w in ws) for ws in words], float)
        logits = np.zeros((len(texts), len(self.labels)))
        logits[:, -1] = score + (0.3 if self.side == "scratch" else 0.0)
        exp = np.exp(logits - logits.max(axis=1, keepdims=True))
        return exp / exp.sum(axis=1, keepdims=True)


class FakeScratch(FakeClassifier):
    """Adds `explain`: tokens padded to 8 with `[PAD]`, attention rows that sum to 1."""

    layers, heads = 2, 3

    def __init__(self) -> None:
        super().__init__("scratch")

    def explain(self, text: str) -> tuple[list[str], np.ndarray]:
        tokens = (text.lower().split()[:8] + ["[PAD]"] * 8)[:8]
        rng = np.random.default_rng(len(text))
        weights = rng.random((self.layers, self.heads, 8, 8))
        return tokens, weights / weights.sum(axis=-1, keepdims=True)


@pytest.fixture
def fakes() -> dict[str, Any]:
    return {"finetune": FakeClassifier("finetune"), "scratch": FakeScratch()}


@pytest.fixture(scope="module")
def real_models(tiny_runs: dict[str, Path]) -> dict[str, Any]:
    """The two tiny finished runs, loaded the way the app loads them."""
    models, problems = app.load_models([tiny_runs["finetune"], tiny_runs["scratch"]])
    assert problems == [] and list(models) == ["finetune", "scratch"]
    return models


@pytest.fixture(scope="module")
def compared_report(tiny_runs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report `python -m compare report` writes over the two tiny runs."""
    from compare.report import main as compare_report

    output = tmp_path_factory.mktemp("app-compared") / "report"
    argv = ["--runs", str(tiny_runs["finetune"]), str(tiny_runs["scratch"]), "--output-dir", str(output)]
    assert compare_report([*argv, "--latency-samples", "2"]) == 0
    return output


@pytest.fixture(scope="module")
def compared(compared_report: Path) -> app.Loaded:
    """What `python app.py --report DIR` loads from that report."""
    return app.load_app(app.AppArguments(report=str(compared_report)))


def write_report(directory: Path, runs: dict[str, Path] | None = None) -> Path:
    """A small report directory in the documented formats, with run.json files under runs/."""
    directory.mkdir(parents=True, exist_ok=True)
    if runs is None:
        runs = {}
        for side in ("finetune", "scratch"):
            (directory / "runs" / side).mkdir(parents=True)
            write_run_json(directory / "runs" / side, run_record(side))
            runs[side] = directory / "runs" / side
    results = {
        "schema_version": 1,
        "split": "test",
        "n": 1821,
        "runs": {name: str(path) for name, path in runs.items()},
        "models": {
            "finetune": {"accuracy": 0.873, "accuracy_ci": [0.85, 0.895], "macro_f1": 0.8712, "params": 22_713_602},
            "scratch": {"accuracy": 0.791, "accuracy_ci": [0.772, 0.81], "macro_f1": 0.79, "disk_bytes": 4_500_000},
        },
        "baselines": {"majority": {"accuracy": 0.5, "macro_f1": 0.333}},
        "comparison": {
            "a": "finetune",
            "b": "scratch",
            "accuracy_diff": 0.082,
            "accuracy_diff_ci": [0.061, 0.104],
            "mcnemar_p": 1.2e-9,
            "winner": "finetune",
        },
    }
    (directory / "results.json").write_text(json.dumps(results))
    rows = [
        ("a great film", "positive", "positive", "negative"),
        ("a dull mess", "negative", "negative", "negative"),
        ("x" * 400, "positive", "positive", "negative"),  # too long to offer as an example
        ("i hated it", "negative", "positive", "negative"),
        ("superb acting", "positive", "positive", "positive"),
        ("boring and far too long", "negative", "positive", "negative"),
    ]
    with (directory / "predictions.jsonl").open("w") as handle:
        for text, gold, ft, sc in rows:
            predictions = {"finetune": {"label": ft, "probs": {}}, "scratch": {"label": sc, "probs": {}}}
            handle.write(json.dumps({"text": text, "gold": gold, "predictions": predictions}) + "\n")
        handle.write("not json\n")
    curve = {
        "schema_version": 1,
        "split": "test",
        "catch_up_size": None,
        "points": [
            {"side": "finetune", "size": 500, "seed": 0, "accuracy": 0.80},
            {"side": "finetune", "size": 500, "seed": 1, "accuracy": 0.82},
            {"side": "scratch", "size": 500, "seed": 0, "accuracy": 0.60},
        ],
    }
    (directory / "curve.json").write_text(json.dumps(curve))
    (directory / "report.html").write_text("<html><body><h1>Report</h1></body></html>")
    from matplotlib.figure import Figure

    figure = Figure(figsize=(3, 2))
    figure.subplots().bar(["finetune", "scratch"], [0.873, 0.791])
    figure.savefig(directory / "accuracy_by_model.png")
    return directory


# --- predict functions --------------------------------------------------------------------------------


def test_predict_functions_of_both_trained_models(real_models: dict, tiny_runs: dict) -> None:
    import pandas as pd

    task_labels = sorted(pd.read_csv(tiny_runs["train_file"])["label"].unique())  # labels are the sorted values
    text = "superb acting, a joy to watch"
    result, latencies = app.classify_timed(text, "both", real_models)
    assert list(result) == ["finetune", "scratch"] and set(latencies) == set(result)
    for side, probs in result.items():
        assert list(probs) == task_labels == real_models[side].run["data"]["labels"]
        assert sum(probs.values()) == pytest.approx(1.0, abs=1e-5)
        assert all(0.0 <= p <= 1.0 for p in probs.values())
        np.testing.assert_allclose(list(probs.values()), real_models[side].predict_proba([text])[0], rtol=1e-5)
        assert app.classify(text, side, real_models)[side] == pytest.approx(probs, abs=1e-6)
    scratch = result["scratch"]  # the tiny scratch run learns the separable fixture
    assert scratch["positive"] > scratch["negative"]


def test_trained_models_answer_whatever_a_user_types(real_models: dict) -> None:
    for text in ODD_TEXTS:
        result = app.classify(text, "both", real_models)
        assert set(result) == {"finetune", "scratch"}, (text, result)
        assert all(sum(p.values()) == pytest.approx(1.0, abs=1e-5) for p in result.values())
        found = app.explain(real_models["scratch"], text)
        assert found is not None, text
        tokens, attention = found
        assert attention.shape[2:] == (len(tokens), len(tokens)) and "[PAD]" not in tokens
        np.testing.assert_allclose(attention.sum(axis=-1), 1.0, atol=1e-4)  # each query's weights sum to 1


def test_classify_both_models_gives_the_task_labels_and_probabilities_summing_to_one(fakes: dict) -> None:
    text = "a great film, superb acting"
    result = app.classify(text, "both", fakes)
    assert list(result) == ["finetune", "scratch"]
    for side, probs in result.items():
        assert list(probs) == LABELS
        assert sum(probs.values()) == pytest.approx(1.0, abs=1e-6)
        np.testing.assert_allclose(list(probs.values()), fakes[side].predict_proba([text])[0], rtol=1e-6)
    for side in ("finetune", "scratch"):
        assert app.classify(text, side, fakes) == {side: result[side]}
    result, latencies = app.classify_timed(text, "both", fakes)
    assert set(latencies) == {"finetune", "scratch"} and all(ms >= 0 for ms in latencies.values())


def test_input_the_models_must_not_see_is_answered_with_a_message(fakes: dict) -> None:
    for empty in ("", "   \n\t", None):
        assert app.classify(empty, "both", fakes) == {"error": "Type or paste some text to classify."}
    too_long = app.classify("b" * 101, "finetune", fakes, max_chars=100)
    assert too_long["error"].startswith("The text has 101 characters; this demo accepts at most 100.")
    assert "finetune" in app.classify("b" * 100, "finetune", fakes, max_chars=100)
    assert "Unknown model 'bert'" in app.classify("fine", "bert", fakes)["error"]
    only_finetune = {"finetune": fakes["finetune"]}
    missing = app.classify("fine", "both", only_finetune)["error"]
    assert missing.startswith("The scratch model is not loaded (loaded: finetune)") and "make report" in missing
    assert "The finetune model is not loaded (loaded: none)" in app.classify("fine", "finetune", {})["error"]


def test_a_failing_model_is_reported_not_raised(fakes: dict) -> None:
    class Broken(FakeClassifier):
        def predict_proba(self, texts: list[str]) -> np.ndarray:
            raise RuntimeError("tensor shapes do not match")

    class NotFinite(FakeClassifier):
        def predict_proba(self, texts: list[str]) -> np.ndarray:
            return np.full((len(texts), 2), np.nan)

    models = {**fakes, "finetune": Broken("finetune")}
    assert app.classify("fine", "both", models) == {
        "error": "The finetune model could not classify this text: tensor shapes do not match"
    }
    assert "not all finite" in app.classify("fine", "finetune", {"finetune": NotFinite("finetune")})["error"]
    assert app.render_results({"error": "boom"}, {}) == (None, None, "", "**boom**")


def test_render_results_fills_each_panel_and_the_latency_line(fakes: dict) -> None:
    result, latencies = app.classify_timed("a great film", "scratch", fakes)
    finetune, scratch, latency, status = app.render_results(result, {"scratch": 3.14159})
    assert finetune is None and scratch == result["scratch"] and status == ""
    assert latency == "Latency (one text, this machine): From-scratch Transformer: **3.1 ms**"


def test_explain_drops_padding_and_the_heatmap_shows_the_chosen_head(fakes: dict) -> None:
    scratch = fakes["scratch"]
    tokens, attention = app.explain(scratch, "a great film")
    full_tokens, full = scratch.explain("a great film")
    assert tokens == ["a", "great", "film"] and full_tokens[3:] == ["[PAD]"] * 5
    np.testing.assert_allclose(attention, full[:, :, :3, :3], rtol=1e-6)
    figure = app.attention_figure(tokens, attention, layer=1, head=2)
    np.testing.assert_allclose(figure.axes[0].images[0].get_array(), full[1, 2, :3, :3], rtol=1e-6)
    assert [t.get_text() for t in figure.axes[0].get_xticklabels()] == tokens
    mean = app.attention_figure(tokens, attention, layer=0, head=-1)
    np.testing.assert_allclose(mean.axes[0].images[0].get_array(), full[0, :, :3, :3].mean(axis=0), rtol=1e-6)
    assert "layer 1, mean over heads" in mean.axes[0].get_title()
    many = [f"t{i}" for i in range(100)]
    weights = np.random.default_rng(0).random((1, 1, 100, 100))
    capped = app.attention_figure(many, weights, layer=0, head=0)
    np.testing.assert_allclose(capped.axes[0].images[0].get_array(), weights[0, 0, :48, :48], rtol=1e-6)
    assert capped.axes[0].get_title().endswith("(first 48 of 100 tokens)")
    assert app.explain(scratch, "   ") is None and app.explain(fakes["finetune"], "text") is None
    assert app.explain(scratch, "x" * 6000) is None  # over the limit: no heatmap either


# --- report view ----------------------------------------------------------------------------------------


def test_examples_put_disagreements_first_and_spread_over_gold_labels(tmp_path: Path) -> None:
    report = app.load_report(write_report(tmp_path / "report"))
    texts = [(e.text, e.disagreement) for e in report.examples]
    # Disagreements in file order, alternating gold labels; the 400-character row and the bad line are skipped.
    assert texts == [
        ("a great film", True),
        ("i hated it", True),
        ("boring and far too long", True),
        ("a dull mess", False),
        ("superb acting", False),
    ]
    assert report.examples[0].predictions == {"finetune": "positive", "scratch": "negative"}
    rows = [app.Example(f"t{i}", gold, {"a": "x", "b": "y"}) for i, gold in enumerate("aaab")]
    assert [e.text for e in app.pick_examples(rows, per_kind=2)] == ["t0", "t3"]


def test_report_view_states_the_verdict_table_runs_and_curve(tmp_path: Path) -> None:
    report = app.load_report(write_report(tmp_path / "report"))
    results = report.results
    assert app.verdict(results) == (
        "**finetune is more accurate than scratch** on 1,821 test examples: accuracy finetune − scratch = "
        "+8.2 points, paired 95% interval [+6.1, +10.4], McNemar p = 1.2e-09."
    )
    results["comparison"].update(winner=None, accuracy_diff=-0.004, accuracy_diff_ci=[-0.02, 0.012])
    assert app.verdict(results).startswith("**No clear winner** on 1,821 test examples: accuracy finetune − scratch")
    assert "-0.4 points, and its paired 95% interval [-2.0, +1.2] contains 0" in app.verdict(results)
    results["comparison"]["verdict"] = "No clear winner: the interval contains 0."
    assert app.verdict(results) == "No clear winner: the interval contains 0. Measured on 1,821 test examples."
    results["comparison"].update(winner="finetune", verdict="finetune beats scratch by 8.2 points.")
    assert (
        app.verdict(results)
        == "**Winner: finetune.** finetune beats scratch by 8.2 points. Measured on 1,821 test examples."
    )
    table = app.headline_table(results)
    assert "| **finetune** | 87.3% (85.0% – 89.5%) | 87.1% | – |" in table
    assert "| **finetune** | 22,713,602 | – |" in table and "| **scratch** | – | 4.5 MB |" in table
    assert "| *baseline: majority class* | 50.0% | 33.3% |" in table
    runs = app.report_runs(report, {})
    assert list(runs) == ["finetune", "scratch"]
    expected = "| **scratch** | tiny-scratch | sst2 | 200 / 20 / 30 | 12,345 | 12.5 s | 3 (2) | 85.0% | 84.1% |"
    assert expected in app.runs_table(runs)
    assert "| **best (finetune)** |" in app.runs_table({"best": runs["finetune"]})
    curve = app.curve_summary(report.curve)
    assert "| 500 | 81.0% | 60.0% |" in curve and "does not catch up" in curve
    assert [p.name for p in report.figures] == ["accuracy_by_model.png"]
    assert app.figure_title(report.figures[0]) == "Accuracy by model"
    assert app.checkpoint("/tmp/runs/tiny-bert") == "tiny-bert" and app.checkpoint("minilm") == "minilm"


def test_load_report_refuses_a_directory_without_results(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"has no results.json. Create one with `make report`"):
        app.load_report(tmp_path)


def test_the_app_reads_a_report_written_by_compare(compared_report: Path, compared: app.Loaded) -> None:
    loaded = compared
    assert loaded.problems == [] and list(loaded.models) == ["finetune", "scratch"]
    results = json.loads((compared_report / "results.json").read_text())
    rows = [json.loads(line) for line in (compared_report / "predictions.jsonl").read_text().splitlines()]
    by_text = {row["text"]: row for row in rows}
    assert loaded.examples and all(e.text in by_text for e in loaded.examples)
    for example in loaded.examples:
        row = by_text[example.text]
        assert example.gold == row["gold"]
        assert example.predictions == {name: p["label"] for name, p in row["predictions"].items()}
    assert loaded.report.figures and all(p.parent == compared_report for p in loaded.report.figures)
    described = app.report_runs(loaded.report, loaded.models)
    assert {name: run["side"] for name, run in described.items()} == {"finetune": "finetune", "scratch": "scratch"}
    page = json.dumps(app.build_demo(loaded.models, loaded.report).get_config_file(), default=str, ensure_ascii=False)
    assert results["comparison"]["verdict"] in page and "not loaded" not in page
    for name, model in results["models"].items():
        assert app.interval(model["accuracy"], model["accuracy_ci"]) in page, name


def test_runs_without_a_report_offer_examples_from_their_test_split(tiny_runs: dict) -> None:
    import pandas as pd

    loaded = app.load_app(app.AppArguments(runs=[str(tiny_runs["finetune"].parent)]))
    assert loaded.report is None and list(loaded.models) == ["finetune", "scratch"]
    gold = dict(pd.read_csv(tiny_runs["train_file"]).itertuples(index=False))
    assert loaded.examples and all(gold[e.text] == e.gold for e in loaded.examples)
    for example in loaded.examples:  # each model's prediction, recomputed here
        for side, model in loaded.models.items():
            assert example.predictions[side] == model.labels[model.predict_proba([example.text])[0].argmax()]


# --- arguments and sources ------------------------------------------------------------------------------


def test_arguments_are_safe_by_default_and_checked() -> None:
    from core.args import parse_args

    (args,) = parse_args((app.AppArguments,), [])
    assert (args.host, args.port, args.share, args.max_chars, args.report, args.runs) == (
        "127.0.0.1",
        7860,
        False,
        5000,
        None,
        None,
    )
    (args,) = parse_args((app.AppArguments,), ["--runs", "a", "b", "--max-chars", "10", "--share"])
    assert args.runs == ["a", "b"] and args.max_chars == 10 and args.share
    for bad in (["--port", "0"], ["--max-chars", "0"], ["--host", " "]):
        with pytest.raises(SystemExit):
            parse_args((app.AppArguments,), bad)
    with pytest.raises(ValueError, match="--max-chars must be at least 1, got -5"):
        app.AppArguments(max_chars=-5)


def test_sources_default_to_the_newest_report(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    older = write_report(reports / "emotion")
    newer = write_report(reports / "sst2")
    os.utime(older / "results.json", (time.time() - 100, time.time() - 100))
    assert app.resolve_sources(app.AppArguments(), roots=[reports]) == (
        newer,
        [newer / "runs" / "finetune", newer / "runs" / "scratch"],
    )
    os.utime(newer / "results.json", (time.time() - 200, time.time() - 200))
    assert app.resolve_sources(app.AppArguments(), roots=[reports])[0] == older
    explicit = app.resolve_sources(app.AppArguments(runs=[str(newer / "runs" / "scratch")]), roots=[reports])
    assert explicit == (None, [newer / "runs" / "scratch"])
    assert app.resolve_sources(app.AppArguments(), roots=[tmp_path / "nothing"]) == (None, [])


def test_a_report_finds_its_own_runs_even_after_it_was_moved(tmp_path: Path) -> None:
    report = write_report(tmp_path / "report")
    for side in ("finetune", "scratch"):  # a report over several seeds names one run per model
        (report / "runs" / side).rename(report / "runs" / f"{side}-seed42")
    results = json.loads((report / "results.json").read_text())
    results["runs"] = {"ft": "elsewhere/report/runs/finetune-seed42", "sc": str(report / "runs" / "scratch-seed42")}
    (report / "results.json").write_text(json.dumps(results))
    (report / "runs" / "scratch-seed43").mkdir()
    write_run_json(report / "runs" / "scratch-seed43", run_record("scratch"))
    assert app.report_run_dirs(report) == [report / "runs" / "finetune-seed42", report / "runs" / "scratch-seed42"]
    described = app.report_runs(app.load_report(report), {})
    assert list(described) == ["ft", "sc"] and described["ft"]["side"] == "finetune"
    results["runs"] = {}
    (report / "results.json").write_text(json.dumps(results))
    assert len(app.report_run_dirs(report)) == 3  # no names recorded: every run under runs/


def test_runs_that_fail_to_load_are_listed_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "broken").mkdir()
    write_run_json(tmp_path / "broken", run_record("scratch"))  # no model file: the side's loader refuses it
    (tmp_path / "second").mkdir()
    write_run_json(tmp_path / "second", run_record("scratch"))
    models, problems = app.load_models([tmp_path / "broken", tmp_path / "second"])
    assert models == {} and [p.split(":")[0] for p in problems] == [
        f"Could not load {tmp_path / 'broken'}",
        f"Could not load {tmp_path / 'second'}",  # a failed run does not block the next one of its side
    ]


def test_the_page_without_runs_shows_the_command_that_creates_them() -> None:
    demo = app.build_demo({}, None)
    texts = json.dumps(demo.get_config_file(), default=str, ensure_ascii=False)
    assert "No trained models are loaded." in texts and "`make report`" in texts
    assert "From-scratch Transformer (not loaded)" in texts


def test_main_serves_what_the_command_line_names(tiny_runs: dict, tmp_path: Path, monkeypatch) -> None:
    served = {}
    monkeypatch.setattr(app, "serve", lambda demo, args: served.update(demo=demo, args=args))
    monkeypatch.setattr(app, "load", lambda run_dir: FakeScratch())  # loading itself is tested above
    app.main(["--runs", str(tiny_runs["scratch"]), "--port", "7999", "--max-chars", "50"])
    args = served["args"]
    assert (args.host, args.port, args.share, args.max_chars) == ("127.0.0.1", 7999, False, 50)
    page = json.dumps(served["demo"].get_config_file(), default=str, ensure_ascii=False)
    assert "Fine-tuned BERT (not loaded)" in page and "At most 50 characters." in page
    with pytest.raises(SystemExit, match=r"has no results.json. Create one with `make report`"):
        app.main(["--report", str(tmp_path)])


# --- the server -----------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def server(compared: app.Loaded) -> Any:
    """The demo over the compare report of the tiny runs, as `python app.py --report DIR` builds it."""
    args = app.AppArguments(port=free_port())
    loaded = compared
    demo = app.build_demo(loaded.models, loaded.report, examples=loaded.examples)
    app.serve(demo, args, block=False)
    yield loaded.models, f"http://127.0.0.1:{args.port}/"
    demo.close()


def test_the_api_answers_every_model_choice_and_bad_input(server: Any) -> None:
    from gradio_client import Client

    models, url = server
    client = Client(url, verbose=False)
    endpoints = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    assert list(endpoints) == ["/classify"]
    assert [p["parameter_name"] for p in endpoints["/classify"]["parameters"]] == ["text", "model"]
    text = "wonderful and moving"
    for choice in ("finetune", "scratch", "both"):
        answer = client.predict(text=text, model=choice, api_name="/classify")
        expected = app.classify(text, choice, models)
        assert list(answer) == list(expected)
        for side in expected:
            assert answer[side] == pytest.approx(expected[side], abs=1e-6)
    assert client.predict("", "both", api_name="/classify") == {"error": "Type or paste some text to classify."}
    assert client.predict(" \n ", "scratch", api_name="/classify") == {"error": "Type or paste some text to classify."}
    huge = client.predict("z" * 100_000, "both", api_name="/classify")
    assert huge["error"].startswith("The text has 100,000 characters; this demo accepts at most 5,000.")

    def session(worker: int) -> list[dict]:
        own = Client(url, verbose=False)
        return [own.predict(f"{text} {worker} {i}", "both", api_name="/classify") for i in range(10)]

    with ThreadPoolExecutor(max_workers=4) as pool:
        answers = [answer for batch in pool.map(session, range(4)) for answer in batch]
    assert len(answers) == 40
    for answer in answers:
        assert set(answer) == {"finetune", "scratch"}
        assert all(sum(p.values()) == pytest.approx(1.0, abs=1e-5) for p in answer.values())
