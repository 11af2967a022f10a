"""The page over fake models: a report from another version of compare still gives a page that says what to do,
and a distilled student gets its own choice, panel and heatmap."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gradio as gr
import numpy as np

from demo import page, report_view, sources
from tests.demo.fakes import write_report


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
    (tokens, attention), figure = run_explain("a great film", "scratch-distilled", 1, 2)  # the choosers fit scratch
    assert attention.shape == (1, 2, 3, 3) and tokens == ["a", "great", "film"]
    np.testing.assert_allclose(figure.axes[0].images[0].get_array(), attention[0].mean(axis=0), rtol=1e-6)
    assert run_explain("a great film", "finetune", 1, 2) == (None, None)
    (_, attention), _ = run_explain("a great film", "both", 1, 2)
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
