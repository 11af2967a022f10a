"""The page over fake models: a report from another version of compare still gives a page that says what to do,
a distilled student gets its own choice, panel and heatmap, and each kind of task its boxes, panels and examples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gradio as gr
import numpy as np
import pytest

from core.kinds import KINDS, Kind, register
from demo import kinds as demo_kinds
from demo import page, prediction, report_view, sources
from demo.task import task_of
from tests.demo.fakes import LABELS, fake_models, write_report


def test_a_report_missing_fields_is_explained_on_the_page(tmp_path: Path, fakes: dict) -> None:
    report = sources.load_report(write_report(tmp_path / "report"))  # its results.json holds only `runs`
    report.curve = {"points": []}  # and its curve.json no sizes
    text = json.dumps(page.build_demo(fakes, report).get_config_file(), default=str, ensure_ascii=False)
    assert "The report holds no comparison of two models." in text
    assert "The report's files lack 'models', which this version shows; recreate them with `make report`" in text
    assert "The report's files lack 'catch_up_size'" in text
    assert "| scratch | tiny-scratch | sst2 | 200 / 20 / 30 |" in text  # the runs are still described


def callbacks(demo: Any) -> dict[str, Any]:
    """The page's event callbacks by function name, with the elem_ids of their outputs."""
    return {f.name: (f.fn, [getattr(o, "elem_id", None) for o in f.outputs]) for f in demo.fns.values()}


def test_a_distilled_student_gets_its_own_choice_and_panel(three: dict) -> None:
    demo = page.build_demo(three, None)
    components = [c["props"] for c in demo.get_config_file()["components"]]
    (radio,) = [props for props in components if props.get("elem_id") == "choice"]
    assert [tuple(choice) for choice in radio["choices"]] == [
        ("All 3, side by side", "both"),
        ("Fine-tuned BERT", "finetune"),
        ("From-scratch Transformer", "scratch"),
        ("From-scratch Transformer, distilled", "scratch-distilled"),
    ]
    panels = [(p["elem_id"], p["label"]) for p in components if str(p.get("elem_id")).startswith("label-")]
    assert panels == [
        ("label-finetune", "Fine-tuned BERT"),
        ("label-scratch", "From-scratch Transformer"),
        ("label-scratch-distilled", "From-scratch Transformer, distilled"),
    ]
    found = callbacks(demo)
    classify, _ = found["run_classify"]
    show, outputs = found["show_results"]
    result, latencies = classify("a great film", "both")
    shown = dict(zip(outputs, show(result, latencies)))
    assert all(shown[f"label-{name}"] == result[name] for name in three)
    assert "From-scratch Transformer, distilled: **" in shown["latency"] and shown["status"] == ""


def test_the_heatmap_is_drawn_for_the_chosen_student_within_its_own_layers(three: dict) -> None:
    run_explain, _ = callbacks(page.build_demo(three, None))["run_explain"]
    (tokens, attention), figure = run_explain("a great film", "scratch-distilled", "", 1, 2)  # the choosers fit scratch
    assert attention.shape == (1, 2, 3, 3) and tokens == ["a", "great", "film"]
    np.testing.assert_allclose(figure.axes[0].images[0].get_array(), attention[0].mean(axis=0), rtol=1e-6)
    assert run_explain("a great film", "finetune", "", 1, 2) == (None, None)
    (_, attention), _ = run_explain("a great film", "both", "", 1, 2)
    assert attention.shape[:2] == (2, 3)  # both: the scratch model's, as before
    two = page.build_demo({"finetune": three["finetune"], "scratch": three["scratch"]}, None)
    radio = [c["props"] for c in two.get_config_file()["components"] if c["props"].get("elem_id") == "choice"][0]
    assert tuple(radio["choices"][0]) == ("Both, side by side", "both")


def headings(demo: Any) -> list[str]:
    """Every Markdown heading of the page, in order."""
    texts = [c["props"].get("value") or "" for c in demo.get_config_file()["components"] if c["type"] == "markdown"]
    return [line.lstrip("#").strip() for text in texts for line in text.splitlines() if line.startswith("#")]


def images(demo: Any) -> list[dict[str, Any]]:
    return [c["props"] for c in demo.get_config_file()["components"] if c["type"] == "image"]


def test_each_heading_shows_once(fakes: dict, compared_report: Path) -> None:
    from tests.demo.fakes import FakeTranslator

    without_report = page.build_demo(fakes, None, translators={"pt-en": FakeTranslator("pt-en")})
    assert headings(without_report) == [
        "Fine-tuned BERT vs. a Transformer trained from scratch",
        "The runs",
        "The translation runs",
    ]
    report = sources.load_report(compared_report)
    found = headings(page.build_demo({}, report))
    assert len(found) == len(set(found)), found
    for heading in ("Verdict", "Headline", "Diagnosis", "Training time", "The runs", "Figures"):
        assert heading in found, heading
    # the training curves sit in their section, under its table's title; the other figures under Figures
    assert "Validation accuracy against training time" in found
    figures = sorted(path.name for path in compared_report.glob("*.png") if path.name != "training_curves.png")
    assert sorted(found[found.index("Figures") + 1 :]) == sorted(report_view.figure_title(name) for name in figures)


def test_figures_span_the_page_and_references_sit_beside_the_answers(fakes: dict, compared_report: Path) -> None:
    report = sources.load_report(compared_report)
    demo = page.build_demo(fakes, report)
    shown = images(demo)
    assert [Path(props["value"]["path"]).name for props in shown][0] == "training_curves.png"
    assert len(shown) == len(report.figures)
    assert all(props.get("height") is None and props.get("width") is None for props in shown)  # each at its own size
    rows = [
        b for b in demo.blocks.values() if isinstance(b, gr.Row) and any(isinstance(c, gr.Image) for c in b.children)
    ]
    assert rows == []  # one figure a row: none squeezed beside another
    components = demo.get_config_file()["components"]
    ids = [c["props"].get("elem_id") for c in components]
    assert ids.index("gold") > ids.index("classify")  # the gold label is not above the controls
    assert "reference" in components[ids.index("gold")]["props"]["elem_classes"]


def props_by_id(demo: Any) -> dict[str, dict[str, Any]]:
    return {c["props"]["elem_id"]: {**c["props"], "type": c["type"]} for c in demo.get_config_file()["components"]
            if c["props"].get("elem_id")}  # fmt: skip


@pytest.mark.parametrize(
    ("problem_type", "pairs", "header"),
    [
        (
            "single_label_classification",
            True,
            "Type two texts (`sentence1` and `sentence2`) and see how each model classifies them. Task **pairs.csv**, "
            "classes: `negative`, `positive`.",
        ),
        (
            "multi_label_classification",
            False,
            "Type a text and see which labels each model gives it: every label whose probability reaches the "
            "threshold its run chose on validation. Task **goemotions_ekman**, labels: `anger`, `joy`, `neutral`, "
            "`sadness`.",
        ),
        (
            "regression",
            True,
            "Type two texts (`sentence1` and `sentence2`) and see the value each model gives them. Task "
            "**pairs.csv**, a value from 0 to 5 in train.",
        ),
    ],
)
def test_the_classify_tab_is_built_for_each_kind(problem_type: str, pairs: bool, header: str) -> None:
    models = fake_models(problem_type, pairs)
    demo = page.build_demo(models, None)
    found = props_by_id(demo)
    assert header in json.dumps(demo.get_config_file(), default=str, ensure_ascii=False)
    assert found["text-pair"]["visible"] is pairs
    if pairs:
        assert (found["text"]["label"], found["text-pair"]["label"]) == (
            "First text: sentence1",
            "Second text: sentence2",
        )
    else:
        assert found["text"]["label"] == "Text"
    panel_type = "label" if problem_type == "single_label_classification" else "markdown"
    assert [found[f"label-{name}"]["type"] for name in models] == [panel_type, panel_type]
    classify, _ = callbacks(demo)["run_classify"]
    show, outputs = callbacks(demo)["show_results"]
    text, pair = "so glad, a great film", "happy and glad"
    result, latencies = classify(text, "both", pair if pairs else "")
    assert result == prediction.classify(text, "both", models, text_pair=pair if pairs else None)
    shown = dict(zip(outputs, show(result, latencies)))
    task = task_of(models["scratch"].record)
    assert all(shown[f"label-{name}"] == prediction.panel(result[name], task) for name in models)
    if pairs:
        missing = "This task compares two texts: type the second one (sentence2) too."
        assert classify(text, "both", "") == ({"error": missing}, {})
    else:
        assert "single texts, not pairs" in classify(text, "both", "a second text")[0]["error"]
    run_explain, _ = callbacks(demo)["run_explain"]
    (tokens, _), figure = run_explain(text, "both", pair if pairs else "", 0, -1)
    assert ("[SEP]" in tokens) is pairs and figure is not None


def test_pair_examples_fill_both_boxes_and_the_gold_label() -> None:
    models = fake_models("multi_label_classification", True)
    examples = [
        sources.Example("furious", "anger", {"finetune": "anger", "scratch": "anger; sadness"}, "so sad"),
        sources.Example("so glad", "joy", {"finetune": "joy", "scratch": "joy"}, "happy"),
    ]
    demo = page.build_demo(models, None, examples=examples)
    datasets = [c["props"] for c in demo.get_config_file()["components"] if c["type"] == "dataset"]
    assert [props["label"] for props in datasets] == ["Test pairs the two models disagree on", "More test pairs"]
    assert [props["samples"] for props in datasets] == [[["furious", "so sad", "anger"]], [["so glad", "happy", "joy"]]]
    assert props_by_id(demo)["gold"]["label"] == "Gold labels (test split)"


def test_regression_examples_are_those_the_models_differ_most_on() -> None:
    models = fake_models("regression", True)
    examples = [sources.Example("a", "4.2", {"finetune": "3", "scratch": "4"}, "b", {"finetune": 3.0, "scratch": 4.0})]
    demo = page.build_demo(models, None, examples=examples)
    (dataset,) = [c["props"] for c in demo.get_config_file()["components"] if c["type"] == "dataset"]
    assert dataset["label"] == "Test pairs, those the two models differ most on first"
    assert dataset["samples"] == [["a", "b", "4.2"]]
    assert props_by_id(demo)["gold"]["label"] == "Gold value (test split)"


class Grades(Kind):
    """A fourth kind, registered by this test only (the model's side here, the page's view below): ordered grades,
    decided by the expected grade."""

    name = "ordinal_grades"
    title = "ordinal grading"
    short = "grades"
    headline = "accuracy"
    second = "mae"
    validation_fields = ("accuracy", "mae")
    unit = "grade"

    def decide(self, outputs: np.ndarray, thresholds: list[float] | None = None) -> np.ndarray:
        outputs = np.asarray(outputs)
        return np.rint(outputs @ np.arange(outputs.shape[1])).astype(np.int64)  # the expected grade, rounded

    def answer(self, labels: list[str], decision: Any) -> Any:
        return labels[int(decision)]


@demo_kinds.register(Grades)
class ShownGrades(demo_kinds.ShownKind):
    """How the page shows the grades: the grade as a heading, the grades in order."""

    gold_title = "Gold grade"

    def panel(self, answer: dict[str, Any], value_range: tuple[float, float] | None = None) -> Any:
        return f"### {answer['label']}"

    def invitation(self, them: str) -> str:
        return f"see the grade each model gives {them}"

    def answer_space(self, labels: list[str], value_range: tuple[float, float] | None = None) -> str:
        return "grades: " + " < ".join(labels)


@pytest.fixture
def grades() -> Any:
    register(Grades)
    yield KINDS[Grades.name]
    del KINDS[Grades.name]


def test_a_kind_registered_elsewhere_is_served_by_the_page_as_it_says(grades: Kind) -> None:
    from core.record import RunRecord
    from tests.demo.fakes import FakeClassifier, FakeScratch, record_of, run_record

    def graded(model: FakeClassifier) -> FakeClassifier:
        body = run_record(model.side)
        body["data"]["problem_type"], body["validation"] = grades.name, {"accuracy": 0.7, "mae": 0.4, "loss": 0.5}
        model.record = record_of(body)
        return model

    models = {"finetune": graded(FakeClassifier("finetune")), "scratch": graded(FakeScratch())}
    assert isinstance(models["scratch"].record, RunRecord) and models["scratch"].kind is grades
    demo = page.build_demo(models, None)
    text = json.dumps(demo.get_config_file(), default=str, ensure_ascii=False)
    assert "see the grade each model gives it. Task **sst2**, grades: negative < positive." in text
    found = props_by_id(demo)
    assert found["label-finetune"]["type"] == "markdown" and found["gold"]["label"] == "Gold grade (test split)"
    classify, _ = callbacks(demo)["run_classify"]
    show, outputs = callbacks(demo)["show_results"]
    result, latencies = classify("a great film, superb", "both", "")
    probs = models["scratch"].predict_proba(["a great film, superb"])[0]
    assert result["scratch"] == {"label": "positive", "probs": pytest.approx(dict(zip(LABELS, probs)))}
    assert dict(zip(outputs, show(result, latencies)))["label-scratch"] == "### positive"
    assert "| validation accuracy % | validation MAE |" in report_view.runs_table({"scratch": models["scratch"].record})
