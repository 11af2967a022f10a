"""Where the demo's report and runs come from: the newest report, a moved report's runs, examples (of every kind of
task), bad runs, runs of another kind."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from compare.report.locate import report_run_dirs
from core.record import read_run, write_run
from core.translator import is_translation_run
from demo import report_view, sources
from tests.demo.fakes import FakeClassifier, FakeScratch, run_record, write_report


def test_examples_put_disagreements_first_and_spread_over_gold_labels(tmp_path: Path) -> None:
    report = sources.load_report(write_report(tmp_path / "report"))
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
    rows = [sources.Example(f"t{i}", gold, {"a": "x", "b": "y"}) for i, gold in enumerate("aaab")]
    assert [e.text for e in sources.pick_examples(rows, per_kind=2)] == ["t0", "t3"]


def test_load_report_refuses_a_directory_without_results(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"has no results.json. Create one with `make report`"):
        sources.load_report(tmp_path)


@pytest.mark.parametrize("name", ["results.json", "curve.json"])
def test_a_corrupt_json_file_of_a_report_is_named(tmp_path: Path, name: str) -> None:
    (tmp_path / "results.json").write_text("{}", encoding="utf-8")
    (tmp_path / name).write_text('{"models": ', encoding="utf-8")
    with pytest.raises(ValueError, match=rf"{name} is not a readable JSON file .*recreate the report"):
        sources.load_report(tmp_path)


def test_sources_default_to_the_newest_report(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    older = write_report(reports / "emotion")
    newer = write_report(reports / "sst2")
    os.utime(older / "results.json", (time.time() - 100, time.time() - 100))
    assert sources.resolve_sources(None, None, roots=[reports]) == (
        newer,
        [newer / "runs" / "finetune", newer / "runs" / "scratch"],
    )
    os.utime(newer / "results.json", (time.time() - 200, time.time() - 200))
    assert sources.resolve_sources(None, None, roots=[reports])[0] == older
    explicit = sources.resolve_sources(None, [str(newer / "runs" / "scratch")], roots=[reports])
    assert explicit == (None, [newer / "runs" / "scratch"])
    assert sources.resolve_sources(None, None, roots=[tmp_path / "nothing"]) == (None, [])


def test_a_report_finds_its_own_runs_even_after_it_was_moved(tmp_path: Path) -> None:
    report = write_report(tmp_path / "report")
    for side in ("finetune", "scratch"):  # a report over several seeds names one run per model
        (report / "runs" / side).rename(report / "runs" / f"{side}-seed42")
    results = json.loads((report / "results.json").read_text())
    results["runs"] = {"ft": "elsewhere/report/runs/finetune-seed42", "sc": str(report / "runs" / "scratch-seed42")}
    (report / "results.json").write_text(json.dumps(results))
    (report / "runs" / "scratch-seed43").mkdir()
    write_run(report / "runs" / "scratch-seed43", run_record("scratch"))
    assert report_run_dirs(report) == [report / "runs" / "finetune-seed42", report / "runs" / "scratch-seed42"]
    described = report_view.report_runs(sources.load_report(report), {})
    assert list(described) == ["ft", "sc"] and described["ft"].side == "finetune"
    results["runs"] = {}
    (report / "results.json").write_text(json.dumps(results))
    assert len(report_run_dirs(report)) == 3  # no names recorded: every run under runs/


def test_runs_that_fail_to_load_are_listed_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "broken").mkdir()
    write_run(tmp_path / "broken", run_record("scratch"))  # no model file: the side's loader refuses it
    (tmp_path / "second").mkdir()
    write_run(tmp_path / "second", run_record("scratch"))
    models, problems = sources.load_models([tmp_path / "broken", tmp_path / "second"])
    assert models == {} and [p.split(":")[0] for p in problems] == [
        f"Could not load {tmp_path / 'broken'}",
        f"Could not load {tmp_path / 'second'}",  # a failed run does not block the next one of its side
    ]


def fake_load(run_dir: Path) -> FakeClassifier:
    """Stands in for `core.classifier.load` (tested with real runs elsewhere): a fake of the run's side."""
    side = read_run(run_dir).side
    return FakeScratch() if side == "scratch" else FakeClassifier(side)


def test_a_distilled_report_serves_its_three_models_by_their_report_names(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(sources, "load", fake_load)
    runs = {}
    for name, side in (("finetune", "finetune"), ("scratch", "scratch"), ("scratch-distilled", "scratch")):
        runs[name] = tmp_path / "report" / "runs" / f"{name}-seed42"  # named by the report, not by the folder
        runs[name].mkdir(parents=True)
        write_run(runs[name], run_record(side))
    report = write_report(tmp_path / "report", runs)
    models, problems = sources.load_models(report_run_dirs(report), report)
    assert problems == [] and list(models) == ["finetune", "scratch", "scratch-distilled"]
    assert [model.name for model in models.values()] == list(models)
    assert models["scratch-distilled"].side == "scratch"
    without_report, problems = sources.load_models(report_run_dirs(report))
    assert problems == [] and list(without_report) == ["finetune", "scratch", "scratch-distilled"]


def test_the_student_is_served_as_such_whichever_run_comes_first(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(sources, "load", fake_load)
    paths = [tmp_path / "runs" / "scratch-distilled-seed42", tmp_path / "runs" / "scratch-seed42"]  # sorted order
    for path in paths:
        path.mkdir(parents=True)
        write_run(path, run_record("scratch"))
    models, problems = sources.load_models(paths)
    assert problems == [] and list(models) == ["scratch-distilled", "scratch"]


def test_runs_of_one_side_are_told_apart_by_their_folders(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(sources, "load", fake_load)
    paths = [tmp_path / "a" / "scratch", tmp_path / "a" / "student", tmp_path / "b" / "student"]
    for path in paths:
        path.mkdir(parents=True)
        write_run(path, run_record("scratch"))
    models, problems = sources.load_models(paths)
    assert list(models) == ["scratch", "student"] and models["student"].name == "student"
    assert problems == [
        f"Ignored {paths[2]}: every name it could be served under is taken: scratch ({paths[0]}), student ({paths[1]})."
    ]


def test_a_report_with_its_own_names_still_serves_each_side_under_the_side_s_name(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(sources, "load", fake_load)
    runs = {}
    for name, side in (("ft", "finetune"), ("sc", "scratch")):  # compare report --names ft sc
        runs[name] = tmp_path / "report" / "runs" / name
        runs[name].mkdir(parents=True)
        write_run(runs[name], run_record(side))
    report = write_report(tmp_path / "report", runs)
    models, problems = sources.load_models(report_run_dirs(report), report)
    assert problems == [] and list(models) == ["finetune", "scratch"]  # so "both" classifies with the two


def test_translation_examples_put_the_sentences_the_systems_differ_on_most_first(tmp_path: Path) -> None:
    from sacrebleu import sentence_chrf

    from tests.demo.fakes import TRANSLATION_ROWS, write_translation_report

    report = sources.load_report(write_translation_report(tmp_path / "report"))
    spreads = []
    for source, reference, _, translations in TRANSLATION_ROWS:
        if len(source) <= sources.EXAMPLE_MAX_CHARS:  # the 400-character row is not offered
            chrf = [
                sentence_chrf(t, [reference], word_order=2).score for n, t in translations.items() if n != "copy_source"
            ]
            spreads.append((max(chrf) - min(chrf), source))
    expected = [source for _, source in sorted(spreads, key=lambda pair: -pair[0])]
    assert [e.source for e in report.translations] == expected and expected[0] == "casa lua"
    first = report.translations[0]
    assert first.reference == "house moon" and first.domain == "toy" and set(first.chrf) == {"scratch", "bergamot"}
    assert first.chrf["bergamot"] == sentence_chrf("house moon", ["house moon"], word_order=2).score == 100.0
    assert [
        e.source
        for e in sources.pick_translations(sources.read_translations(tmp_path / "report" / "translations.jsonl"), n=1)
    ] == ["casa lua"]


def test_translation_runs_are_told_apart_and_a_bad_one_is_listed(tmp_path: Path) -> None:
    from tests.demo.fakes import translation_record

    (tmp_path / "translation").mkdir()
    (tmp_path / "translation" / "run.json").write_text(json.dumps(translation_record()))  # no saved_model/
    (tmp_path / "classifier").mkdir()
    write_run(tmp_path / "classifier", run_record("scratch"))
    assert is_translation_run(tmp_path / "translation") and not is_translation_run(tmp_path / "classifier")
    assert not is_translation_run(tmp_path / "nothing")
    translators, problems = sources.load_translators([tmp_path / "translation"])
    assert translators == {} and problems == [
        f"Could not load {tmp_path / 'translation'}: {tmp_path / 'translation'} has no saved_model/; "
        "the run is incomplete, train it again."
    ]


# --- pairs, multi-label and regression ----------------------------------------------------------------------


def write_predictions(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows) + "not json\n", encoding="utf-8")
    return path


def test_multi_label_and_pair_predictions_are_read_as_examples(tmp_path: Path) -> None:
    rows = [  # docs/formats.md: a multi-label pair task's rows
        {"text": "furious", "text_pair": "so sad", "gold": ["anger", "sadness"], "predictions": {
            "finetune": {"label": ["anger", "sadness"], "probs": {"anger": 0.9, "sadness": 0.7}},
            "scratch": {"label": ["anger"], "probs": {"anger": 0.8, "sadness": 0.2}}}},
        {"text": "plain", "text_pair": "words", "gold": [], "predictions": {
            "finetune": {"label": [], "probs": {}}, "scratch": {"label": [], "probs": {}}}},
    ]  # fmt: skip
    found = list(sources.read_predictions(write_predictions(tmp_path / "predictions.jsonl", rows)))
    assert [(e.text, e.text_pair, e.gold, e.predictions, e.disagreement) for e in found] == [
        ("furious", "so sad", "anger; sadness", {"finetune": "anger; sadness", "scratch": "anger"}, True),
        ("plain", "words", "(none)", {"finetune": "(none)", "scratch": "(none)"}, False),
    ]


def test_regression_examples_are_those_the_models_differ_most_on(tmp_path: Path) -> None:
    spreads = [0.5, 2.25, 0.0, 1.0]
    rows = [
        {"text": f"t{i}", "text_pair": f"p{i}", "gold": 2.5 + i,
         "predictions": {"finetune": {"value": 1.0}, "scratch": {"value": 1.0 + spread}}}
        for i, spread in enumerate(spreads)
    ]  # fmt: skip
    rows.append(
        {"text": "x" * 400, "text_pair": "p", "gold": 1.0, "predictions": {"a": {"value": 0}, "b": {"value": 5}}}
    )
    rows.append(
        {"text": "t", "text_pair": "y" * 400, "gold": 1.0, "predictions": {"a": {"value": 0}, "b": {"value": 5}}}
    )
    read = list(sources.read_predictions(write_predictions(tmp_path / "predictions.jsonl", rows)))
    assert read[1].gold == "3.5" and read[1].predictions == {"finetune": "1", "scratch": "3.25"}
    assert read[1].values == {"finetune": 1.0, "scratch": 3.25} and read[1].spread == 2.25
    picked = sources.pick_examples(read, per_kind=1)  # two rows, the widest spreads; both too-long rows left out
    assert [(e.text, e.spread) for e in picked] == [("t1", 2.25), ("t3", 1.0)]


def test_a_run_of_another_kind_than_the_first_is_not_served_beside_it(tmp_path: Path, monkeypatch) -> None:
    from tests.demo.fakes import FakeRegression

    def load(run_dir: Path):
        record = read_run(run_dir)
        return FakeRegression(record.side) if record.kind.gives_values else fake_load(run_dir)

    monkeypatch.setattr(sources, "load", load)
    paths = [tmp_path / name for name in ("finetune", "scratch", "other")]
    records = [
        run_record("finetune", [], "regression", pairs=True, value_range=[0.0, 5.0]),
        run_record("scratch"),
        run_record("scratch", [], "regression", pairs=True),
    ]
    for path, record in zip(paths, records):
        path.mkdir()
        write_run(path, record)
    models, problems = sources.load_models(paths)
    assert list(models) == ["finetune", "scratch"] and models["scratch"].kind.name == "regression"
    assert problems == [
        f"Ignored {paths[1]}: it is a run of single-label classification, the runs before it of regression on pairs of texts "
        f"(sentence1, sentence2); serve it on its own with `python app.py --runs {paths[1]}`."
    ]


def test_live_examples_of_a_multi_label_pair_task_come_from_its_test_split(tmp_path: Path) -> None:
    from tests.conftest import write_csv
    from tests.demo.fakes import fake_models, with_options

    words = {"anger": "furious", "joy": "happy", "sadness": "tears", "neutral": "plain"}
    rows = []
    for i in range(60):
        first, second = list(words)[i % 4], list(words)[(i // 4) % 4]
        labels = sorted({first, second} - ({"neutral"} if first != second else set())) or ["neutral"]
        rows.append((f"{words[first]} {i}", f"{words[second]} again", ";".join(reversed(labels))))
    path = write_csv(tmp_path / "pairs.csv", rows, header="sentence1,sentence2,labels")
    models = fake_models("multi_label_classification", True)
    options = {"train_file": str(path), "text_column": ["sentence1"], "text_pair_column": "sentence2",
               "label_column": "labels", "problem": "multi_label_classification", "seed": 0}  # fmt: skip
    for model in models.values():
        with_options(model, options)
    examples = sources.live_examples(models)
    by_text = {text: (pair, labels) for text, pair, labels in rows}
    assert examples and all(e.text_pair == by_text[e.text][0] for e in examples)
    for example in examples:
        assert example.gold == "; ".join(sorted(by_text[example.text][1].split(";")))  # in label order
        for name, model in models.items():
            probs = model.predict_proba([example.text], [example.text_pair])
            chosen = [label for label, on in zip(model.labels, probs[0] >= model.thresholds) if on]
            assert example.predictions[name] == ("; ".join(chosen) or "(none)"), (example, name)
    assert any(e.disagreement for e in examples)
