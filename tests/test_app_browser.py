"""A real browser (Debian's Chromium driven by Playwright) types a sentence and reads both models' answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

import app
from compare.bench.app_load import free_port
from demo import page as demo_page
from demo.prediction import classify, title
from tests.demo.fakes import compare_report

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

pytestmark = [
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="Debian's Chromium is not at /usr/bin/chromium (apt-get install chromium)"
    ),
    pytest.mark.filterwarnings("ignore:'HTTP_422_UNPROCESSABLE_ENTITY' is deprecated"),
    pytest.mark.slow,  # a browser and the app's server
]


@pytest.fixture
def served(tiny_runs: dict[str, Path], tmp_path: Path) -> Any:
    """`python app.py --report DIR` over compare's report of the tiny trained runs, on a free loopback port."""
    report = compare_report(tiny_runs, tmp_path / "report")
    args = app.AppArguments(report=str(report), port=free_port())
    loaded = app.load_app(args)
    demo = demo_page.build_demo(loaded.models, loaded.report, examples=loaded.examples)
    app.serve(demo, args, block=False)
    yield loaded.models, loaded.report.results, f"http://127.0.0.1:{args.port}/"
    demo.close()


def type_until_it_stays(page: Any, box: Any, text: str, attempts: int = 10) -> None:
    """Fills `box` and waits until the text stays: Gradio may reset inputs once while the page finishes mounting."""
    for _ in range(attempts):
        box.fill(text)
        page.wait_for_timeout(1500)
        if box.input_value() == text:
            return
    raise AssertionError(f"the text box kept losing its text after {attempts} attempts")


def test_a_browser_classifies_a_sentence_with_both_models(served: Any, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    models, results, url = served
    sentence = "i hated it, terrible acting and a dull mess"
    expected = {side: model.labels[model.predict_proba([sentence])[0].argmax()] for side, model in models.items()}
    outside: list[str] = []

    def loopback_only(route: Any) -> None:
        if urlparse(route.request.url).hostname in ("127.0.0.1", "localhost"):
            route.continue_()
        else:  # the page must work offline: anything else is recorded and refused
            outside.append(route.request.url)
            route.abort()

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.route("**/*", loopback_only)
            page.goto(url)
            type_until_it_stays(page, page.locator("#text textarea"), sentence)
            page.locator("#classify").click()
            tops = {}
            for side in models:
                top = page.locator(f"#label-{side} [data-testid='label-output-value']")
                top.wait_for(timeout=30_000)
                tops[side] = top.inner_text().strip()
            why = page.locator("#why .why-column")  # each model's words, highlighted by their attribution
            why.nth(len(models) - 1).wait_for(timeout=60_000)
            highlighted = [why.nth(i).inner_text() for i in range(why.count())]
            page.get_by_text("Attention: where the from-scratch model looks").click()  # closed by default
            page.locator("#attention img, #attention svg, #attention canvas").first.wait_for(timeout=30_000)
            screenshot = tmp_path / "classify.png"
            page.screenshot(path=str(screenshot), full_page=True)
            page.locator("#min-confidence input[type='number']").fill("1")  # only a certain model answers
            page.locator("#classify").click()
            page.locator("#status").get_by_text("abstains").first.wait_for(timeout=30_000)
            abstained = page.locator("#status").inner_text()
            page.get_by_role("tab", name="Report").click()
            verdict = results["comparison"]["verdict"].removeprefix("No clear winner: ")[1:]
            page.get_by_text(verdict, exact=False).first.wait_for(timeout=10_000)
            page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        finally:
            browser.close()
    assert tops == expected and expected["scratch"] == "negative"  # the tiny scratch run learns the fixture
    doubting = classify(sentence, "both", models, min_confidence=1.0)["abstained"]  # the API's abstentions
    assert doubting and all((f"{title(side)} abstains" in abstained) == (side in doubting) for side in models)
    assert len(highlighted) == len(models) and all("hated" in words and "dull" in words for words in highlighted)
    assert screenshot.stat().st_size > 10_000
    assert outside == []


@pytest.fixture
def served_pairs(tmp_path: Path) -> Any:
    """The demo over a fine-tuned and a from-scratch fake of a multi-label pair task, with two test pairs to click."""
    from demo.sources import Example
    from tests.demo.fakes import fake_models

    models = fake_models("multi_label_classification", True)
    examples = [
        Example("furious and angry", "anger; sadness", {"finetune": "anger", "scratch": "anger; sadness"}, "tears"),
        Example("so glad today", "joy", {"finetune": "joy", "scratch": "joy"}, "happy news"),
    ]
    args = app.AppArguments(port=free_port())
    demo = demo_page.build_demo(models, None, examples=examples)
    app.serve(demo, args, block=False)
    yield models, f"http://127.0.0.1:{args.port}/"
    demo.close()


def test_a_browser_classifies_a_pair_and_reads_each_model_s_chosen_labels(served_pairs: Any, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    models, url = served_pairs
    text, pair = "furious and in tears, so sad", "glad it is over"
    expected = classify(text, "both", models, text_pair=pair)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(url)
            type_until_it_stays(page, page.locator("#text textarea"), text)
            type_until_it_stays(page, page.locator("#text-pair textarea"), pair)
            labels = [
                page.locator("#text label").first.inner_text(),
                page.locator("#text-pair label").first.inner_text(),
            ]
            page.locator("#classify").click()
            shown = {}
            for name in models:
                panel = page.locator(f"#label-{name}")
                panel.get_by_text("Chosen:").wait_for(timeout=30_000)
                shown[name] = panel.inner_text()
            page.get_by_text("Attention: where the from-scratch model looks").click()  # closed by default
            page.locator("#attention img").first.wait_for(timeout=30_000)  # the heatmap, drawn after the answers
            screenshot = tmp_path / "classify-pairs.png"
            page.screenshot(path=str(screenshot), full_page=True)
        finally:
            browser.close()
    assert "First text: sentence1" in labels[0] and "Second text: sentence2" in labels[1]
    for name, answer in expected.items():
        chosen = shown[name].split("Chosen:")[1].splitlines()[0]
        assert [label.strip() for label in chosen.split(",")] == answer["label"], (name, shown[name])
        for label, threshold in answer["thresholds"].items():
            assert f"{answer['probs'][label]:.3f}" in shown[name] and f"{threshold:.3f}" in shown[name]
    assert expected["finetune"]["label"] != expected["scratch"]["label"]  # the runs' own thresholds differ
    assert screenshot.stat().st_size > 10_000
