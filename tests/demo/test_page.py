"""The page over fake models: a report from another version of compare still gives a page that says what to do,
and a distilled student gets its own choice, panel and heatmap."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from demo import page, sources
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
