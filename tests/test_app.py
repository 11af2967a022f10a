"""`app.py`: its arguments, what it loads (and warms up) before serving, and the server driven through gradio_client."""

from __future__ import annotations

import json
import re
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import app
from compare.bench.app_load import free_port
from compare.render.format import ci, pct
from demo import page, prediction, sources
from tests.demo.fakes import FakeClassifier, FakeScratch

# Gradio 6.17 reads a status constant that its pinned Starlette deprecates, once per queued request: `app.serve`
# filters it out, but pytest restores the warning filters after each test, and the module's server outlives the
# test that started it. The request log itself is tested on `python app.py` below.
pytestmark = pytest.mark.filterwarnings("ignore:'HTTP_422_UNPROCESSABLE_ENTITY' is deprecated")


@pytest.fixture(scope="module")
def compared(compared_report: Path) -> app.Loaded:
    """What `python app.py --report DIR` loads from compare's report over the tiny runs."""
    return app.load_app(app.AppArguments(report=str(compared_report)))


def page_text(demo: Any) -> str:
    return json.dumps(demo.get_config_file(), default=str, ensure_ascii=False)


@pytest.mark.slow
def test_the_app_shows_a_report_written_by_compare(compared_report: Path, compared: app.Loaded) -> None:
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
    text = page_text(page.build_demo(loaded.models, loaded.report))
    sentence = results["comparison"]["verdict"].removeprefix("No clear winner: ")
    assert sentence[1:] in text and "not loaded" not in text
    for name, model in results["models"].items():
        assert f"{pct(model['accuracy'])} {ci(model['accuracy_ci'])}" in text, name
        assert f"### Diagnosis of {name}" in text, name
    assert "## Training time" in text and json.dumps(results["training_curves"]["equal_time"])[1:-1] in text
    assert "## Tuning" not in text  # the report tuned nothing, so the section is left out


def test_runs_without_a_report_offer_examples_from_their_test_split(tiny_runs: dict) -> None:
    import pandas as pd

    loaded = app.load_app(app.AppArguments(runs=[str(tiny_runs["finetune"].parent)]))
    assert loaded.report is None and list(loaded.models) == ["finetune", "scratch"]
    gold = dict(pd.read_csv(tiny_runs["train_file"]).itertuples(index=False))
    assert loaded.examples and all(gold[e.text] == e.gold for e in loaded.examples)
    for example in loaded.examples:  # each model's prediction, recomputed here
        for side, model in loaded.models.items():
            assert example.predictions[side] == model.labels[model.predict_proba([example.text])[0].argmax()]


class Counting(FakeClassifier):
    def __init__(self, side: str, log: list) -> None:
        super().__init__(side)
        self.log = log

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        self.log.append((self.side, list(texts)))
        return super().predict_proba(texts)


def test_each_model_is_warmed_up_before_the_first_request(tiny_runs: dict, monkeypatch) -> None:
    log: list = []
    monkeypatch.setattr(sources, "load", lambda run_dir: Counting(str(run_dir.name), log))
    loaded = app.load_app(app.AppArguments(runs=[str(tiny_runs["finetune"]), str(tiny_runs["scratch"])]))
    assert loaded.problems == []
    assert log[:2] == [("finetune", [prediction.WARM_UP_TEXT]), ("scratch", [prediction.WARM_UP_TEXT])]
    before = len(log)
    prediction.classify("a great film", "both", loaded.models)
    assert log[before:] == [("finetune", ["a great film"]), ("scratch", ["a great film"])]


def test_a_distilled_report_serves_the_student_beside_the_pair(tmp_path: Path, monkeypatch) -> None:
    from core.record import read_run, write_run
    from tests.demo.fakes import run_record, write_report

    runs = {}
    for name, side in (("finetune", "finetune"), ("scratch", "scratch"), ("scratch-distilled", "scratch")):
        runs[name] = tmp_path / "report" / "runs" / name
        runs[name].mkdir(parents=True)
        write_run(runs[name], run_record(side))
    report = write_report(tmp_path / "report", runs)
    monkeypatch.setattr(sources, "load", lambda run_dir: FakeClassifier(read_run(run_dir).side))
    loaded = app.load_app(app.AppArguments(report=str(report)))
    assert loaded.problems == [] and list(loaded.models) == ["finetune", "scratch", "scratch-distilled"]
    text = page_text(page.build_demo(loaded.models, loaded.report))
    assert "All 3, side by side" in text and "label-scratch-distilled" in text and "Ignored" not in text
    answer = prediction.classify("a great film", "both", loaded.models)
    assert list(answer) == ["finetune", "scratch", "scratch-distilled"]


def test_arguments_are_safe_by_default_and_checked() -> None:
    from core.args import OptionsError
    from core.parsing import parse_args

    (args,) = parse_args((app.AppArguments,), [])
    assert (args.host, args.port, args.share, args.max_chars, args.report, args.runs, args.verbose) == (
        "127.0.0.1",
        7860,
        False,
        100_000,
        None,
        None,
        False,
    )
    (args,) = parse_args((app.AppArguments,), ["--runs", "a", "b", "--max-chars", "10", "--share", "--verbose"])
    assert args.runs == ["a", "b"] and args.max_chars == 10 and args.share and args.verbose
    for bad in (["--port", "0"], ["--max-chars", "0"], ["--host", " "]):
        with pytest.raises(OptionsError):
            parse_args((app.AppArguments,), bad)
    with pytest.raises(ValueError, match="--max-chars must be at least 1, got -5"):
        app.AppArguments(max_chars=-5)


def test_tensorflow_notices_stay_quiet_unless_verbose() -> None:
    """The level app.py sets before TensorFlow loads, which the processes it starts inherit."""
    import os
    import subprocess
    import sys

    probe = "import os, app; print(os.environ['TF_CPP_MIN_LOG_LEVEL'])"
    env = {key: value for key, value in os.environ.items() if key != "TF_CPP_MIN_LOG_LEVEL"}
    for flags, level in (([], "2"), (["--verbose"], "0")):
        done = subprocess.run(
            [sys.executable, "-c", probe, *flags],
            capture_output=True,
            text=True,
            env=env,
            cwd=Path(app.__file__).parent,
        )
        assert done.stdout.strip().splitlines()[-1] == level, done.stderr[-500:]


def test_the_page_without_runs_shows_the_command_that_creates_them() -> None:
    text = page_text(page.build_demo({}, None))
    assert "No trained models are loaded." in text and "`make report`" in text
    assert "From-scratch Transformer (not loaded)" in text


def test_main_serves_what_the_command_line_names(tiny_runs: dict, tmp_path: Path, monkeypatch, capsys) -> None:
    served = {}
    monkeypatch.setattr(app, "serve", lambda demo, args: served.update(demo=demo, args=args))
    monkeypatch.setattr(sources, "load", lambda run_dir: FakeScratch())  # loading itself is tested in tests/demo
    assert app.main(["--runs", str(tiny_runs["scratch"]), "--port", "7999", "--max-chars", "50"]) == 0
    args = served["args"]
    assert (args.host, args.port, args.share, args.max_chars) == ("127.0.0.1", 7999, False, 50)
    text = page_text(served["demo"])
    assert "Fine-tuned BERT (not loaded)" in text and "At most 50 characters." in text
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        app.main(["--report", str(tmp_path)])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.startswith("error: ") and err.count("\n") == 1
    assert "has no results.json. Create one with `make report`" in err


def test_translation_runs_on_the_command_line_get_a_translate_tab(tmp_path: Path, monkeypatch) -> None:
    from core.record import write_run
    from demo import translation
    from tests.demo.fakes import FakeTranslator, run_record, translation_record

    runs = tmp_path / "runs"
    for name, arch in (("pt-en", "encoder-decoder"), ("pt-en-gpt", "decoder-only")):
        (runs / name).mkdir(parents=True)
        (runs / name / "run.json").write_text(json.dumps(translation_record(arch)))
    (tmp_path / "classifier").mkdir()
    write_run(tmp_path / "classifier", run_record("scratch"))
    loaded_runs: list = []

    def load_translator(run_dir: Path) -> FakeTranslator:
        loaded_runs.append(run_dir)
        return FakeTranslator(run_dir.name, "decoder-only" if run_dir.name.endswith("gpt") else "encoder-decoder")

    monkeypatch.setattr(sources, "load_translator", load_translator)
    monkeypatch.setattr(sources, "load", lambda run_dir: FakeScratch())  # loading itself is tested in tests/demo
    loaded = app.load_app(app.AppArguments(runs=[str(tmp_path / "classifier"), str(runs)]))
    assert loaded.problems == [] and list(loaded.models) == ["scratch"]
    assert list(loaded.translators) == ["pt-en", "pt-en-gpt"] and loaded_runs == [runs / "pt-en", runs / "pt-en-gpt"]
    warm = translation.WARM_UP_SENTENCE
    # greedy, beam search and beam search with minimum-Bayes-risk selection traced
    assert loaded.translators["pt-en"].calls == [([warm], 1, False), ([warm], 2, False), ([warm], 2, True)]
    assert loaded.translators["pt-en-gpt"].calls == [([warm], 1, False)]  # a decoder-only model takes beam 1 only
    text = page_text(app.create_demo(app.AppArguments(runs=[str(runs)], max_chars=300)))
    assert '"Translate"' in text and '"Classify"' not in text
    assert "At most 300 characters; translated sentence by sentence." in text
    assert "## The translation runs" in text and "| pt-en-gpt | decoder-only |" in text


# --- the server -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(compared: app.Loaded) -> Any:
    """The demo over compare's report of the tiny runs, as `python app.py --report DIR` builds it."""
    args = app.AppArguments(port=free_port())
    loaded = compared
    demo = page.build_demo(loaded.models, loaded.report, examples=loaded.examples)
    app.serve(demo, args, block=False)
    yield loaded.models, f"http://127.0.0.1:{args.port}/"
    demo.close()


def direct(models: dict, side: str, text: str) -> dict[str, float]:
    """The side's probabilities for `text`, straight from its Classifier."""
    return dict(zip(models[side].labels, map(float, models[side].predict_proba([text])[0])))


def test_the_api_answers_every_model_choice_and_bad_input(server: Any) -> None:
    from gradio_client import Client

    models, url = server
    client = Client(url, verbose=False)
    endpoints = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    assert list(endpoints) == ["/classify"]
    assert [p["parameter_name"] for p in endpoints["/classify"]["parameters"]] == [
        "text",
        "model",
        "text_pair",
        "attributions",
        "min_confidence",
    ]
    text = "wonderful and moving"
    for choice in ("finetune", "scratch", "both"):
        answer = client.predict(text=text, model=choice, api_name="/classify")
        sides = ["finetune", "scratch"] if choice == "both" else [choice]
        assert list(answer) == sides
        for side in sides:
            assert answer[side] == pytest.approx(direct(models, side, text), abs=1e-5)
    assert client.predict("", "both", api_name="/classify") == {"error": "Type or paste some text to classify."}
    assert client.predict(" \n ", "scratch", api_name="/classify") == {"error": "Type or paste some text to classify."}
    huge = client.predict("z" * 100_001, "both", api_name="/classify")
    assert huge["error"].startswith("The text has 100,001 characters; this demo accepts at most 100,000.")


def test_bad_input_is_answered_with_an_error_and_logs_no_traceback(server: Any, capfd, caplog) -> None:
    from gradio_client import Client

    _, url = server
    client = Client(url, verbose=False)
    choices = "both, finetune, scratch"
    for text, model, message in (
        ("a great film", "bert", f"Unknown model 'bert'; choose one of {choices}."),
        ("a great film", 3, f"Unknown model 3; choose one of {choices}."),
        ("a great film", "x" * 10_000, f"Unknown model 'xxxxxxxxxxxx...xxxxxxxxxxxxx'; choose one of {choices}."),
        (42, "both", "The text must be a string, got 42 (int)."),
        (["a", "great", "film"], "scratch", "The text must be a string, got ['a', 'great', 'film'] (list)."),
        (None, "both", "Type or paste some text to classify."),
    ):
        assert client.predict(text, model, api_name="/classify") == {"error": message}, (text, model)
    assert "Traceback" not in capfd.readouterr().err
    assert [record.getMessage() for record in caplog.records if record.exc_info] == []


@pytest.mark.slow  # starting `python app.py` takes about 20 s here
def test_the_request_log_holds_the_apps_own_lines_only(tmp_path: Path) -> None:
    """`python app.py` itself: no traceback for bad input, no warning per request, no advice to set `share=True`
    in a `launch()` the user never calls."""
    from gradio_client import Client

    from compare.bench.app_load import wait_until_serving
    from core.processes import start_command
    from tests.demo.fakes import write_report

    report = write_report(tmp_path / "report", runs={})  # no runs to load: the page says how to make them
    port, log = free_port(), tmp_path / "app.log"
    url = f"http://127.0.0.1:{port}/"
    process = start_command([sys.executable, app.__file__, "--report", report, "--port", port], log)
    try:
        wait_until_serving(url, process, log, timeout=120)
        client = Client(url, verbose=False)
        for _ in range(3):
            assert "not loaded" in client.predict("a great film", "both", api_name="/classify")["error"]
        assert client.predict("a great film", "bert", api_name="/classify")["error"].startswith("Unknown model")
        assert client.predict(42, "both", api_name="/classify") == {"error": "The text must be a string, got 42 (int)."}
    finally:
        process.terminate()
        process.wait(timeout=30)
    text = log.read_text()
    assert f"Serving the demo on {url} (--share also opens a public link)" in text
    assert "Traceback" not in text and "share=True" not in text and "HTTP Request" not in text, text
    assert not re.search(r"\w+Warning: ", text), text


@pytest.mark.slow
def test_concurrent_clients_each_get_the_answer_for_their_own_text(server: Any) -> None:
    from gradio_client import Client

    models, url = server
    words = ["wonderful", "dull", "superb", "boring", "moving", "terrible", "joy", "waste"]

    def session(worker: int) -> list[tuple[str, dict]]:
        own = Client(url, verbose=False)
        texts = [f"{words[(worker + i) % len(words)]} film {'!' * i} {worker}" for i in range(10)]
        return [(text, own.predict(text, "both", api_name="/classify")) for text in texts]

    with ThreadPoolExecutor(max_workers=4) as pool:
        answers = [pair for batch in pool.map(session, range(4)) for pair in batch]
    assert len(answers) == 40 and len({text for text, _ in answers}) == 40
    for text, answer in answers:
        assert set(answer) == {"finetune", "scratch"}, text
        for side in answer:
            assert answer[side] == pytest.approx(direct(models, side, text), abs=1e-5), (text, side)


# --- pairs, multi-label and regression through the API ----------------------------------------------------------

KINDS = [
    ("multi_label_classification", True),
    ("multi_label_classification", False),
    ("regression", True),
    ("single_label_classification", True),
]


@pytest.fixture(scope="module", params=KINDS, ids=lambda kind: f"{kind[0]}{'-pairs' if kind[1] else ''}")
def kind_server(request: pytest.FixtureRequest) -> Any:
    """The demo over a fine-tuned and a from-scratch fake of one kind of task, served on a free loopback port."""
    from tests.demo.fakes import fake_models

    problem_type, pairs = request.param
    models = fake_models(problem_type, pairs)
    args = app.AppArguments(port=free_port())
    demo = page.build_demo(models, None)
    app.serve(demo, args, block=False)
    yield models, problem_type, pairs, f"http://127.0.0.1:{args.port}/"
    demo.close()


def test_the_api_answers_each_kind_with_the_models_own_outputs(kind_server: Any) -> None:
    from gradio_client import Client

    models, problem_type, pairs, url = kind_server
    client = Client(url, verbose=False)
    endpoints = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    assert [p["parameter_name"] for p in endpoints["/classify"]["parameters"]] == [
        "text",
        "model",
        "text_pair",
        "attributions",
        "min_confidence",
    ]
    text, pair = "furious and sad, in tears, a great film", "tears and a sad film"
    for choice in ("finetune", "scratch", "both"):
        given = {"text_pair": pair} if pairs else {}
        answer = client.predict(text=text, model=choice, api_name="/classify", **given)
        names = ["finetune", "scratch"] if choice == "both" else [choice]
        assert list(answer) == names, answer
        for name in names:
            model, asked = models[name], ([pair] if pairs else None)
            if problem_type == "regression":
                assert answer[name] == {"value": pytest.approx(float(model.predict_values([text], asked)[0]), abs=1e-6)}
                continue
            probs = model.predict_proba([text], asked) if pairs else model.predict_proba([text])
            if problem_type == "single_label_classification":
                assert answer[name] == pytest.approx(dict(zip(model.labels, map(float, probs[0]))), abs=1e-6)
                continue
            assert set(answer[name]) == {"label", "probs", "thresholds"}
            assert answer[name]["probs"] == pytest.approx(dict(zip(model.labels, map(float, probs[0]))), abs=1e-6)
            assert answer[name]["thresholds"] == pytest.approx(dict(zip(model.labels, model.thresholds)))
            assert answer[name]["label"] == [
                model.labels[k] for k in np.flatnonzero(model.kind.decide(probs, model.thresholds)[0])
            ]
    if problem_type == "multi_label_classification":  # by hand: "sad" and "tears" (with commas) count in the pair
        both = client.predict(text, "both", pair if pairs else "", api_name="/classify")
        assert both["finetune"]["label"] == (["anger", "sadness"] if pairs else ["anger"])


def test_the_api_refuses_a_missing_or_extra_second_text_and_logs_no_traceback(kind_server: Any, capfd, caplog) -> None:
    from gradio_client import Client

    _, _, pairs, url = kind_server
    client = Client(url, verbose=False)
    if pairs:
        missing = "This task compares two texts: type the second one (sentence2) too."
        assert client.predict("a man plays", "both", api_name="/classify") == {"error": missing}  # the default: ""
        assert client.predict("a man plays", "both", None, api_name="/classify") == {"error": missing}
        assert client.predict("a man plays", "both", " ", api_name="/classify") == {"error": missing}
        assert client.predict("a man plays", "scratch", 7, api_name="/classify") == {
            "error": "The second text must be a string, got 7 (int)."
        }
        huge = client.predict("a man plays", "both", "z" * 100_001, api_name="/classify")["error"]
        assert huge.startswith("The second text has 100,001 characters; this demo accepts at most 100,000.")
    else:
        refused = client.predict("so glad", "both", "a second text", api_name="/classify")
        assert refused["error"].startswith("The loaded runs classify single texts, not pairs: send no text_pair")
        assert set(client.predict("so glad", "both", api_name="/classify")) == {"finetune", "scratch"}
    for text, model, text_pair in ((42, "both", "x"), (["a"], "both", ["b"]), ("a", "bert", {"a": 1}), (None, 3, None)):
        answer = client.predict(text, model, text_pair, api_name="/classify")
        assert list(answer) == ["error"] and isinstance(answer["error"], str), (text, model, text_pair)
    assert "Traceback" not in capfd.readouterr().err
    assert [record.getMessage() for record in caplog.records if record.exc_info] == []
