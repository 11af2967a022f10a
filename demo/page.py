"""The demo's page: a classifier tab (one `gr.Label` per model, latency, test-split examples, the from-scratch
model's attention), a Translate tab when translation runs are loaded (`demo.translate_tab`), and a report tab
(verdict, headline, diagnosis, training time, tuning, runs, curve, figures; a translation report's scores and
differences), over already loaded models."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import gradio as gr

from compare.diagnosis.training_curves_figure import FILENAME as TRAINING_CURVES
from compare.render.curve import FIGURE as CURVE_FIGURE
from compare.render.tuning import FIGURE as TUNING_FIGURE
from compare.translation import figures as translation_figures
from core.translator import TASK_KIND
from demo import report_view
from demo.prediction import (
    BOTH,
    DEFAULT_MAX_CHARS,
    attention_figure,
    attention_model,
    classify_timed,
    explain,
    model_names,
    render_results,
    title,
)
from demo.sources import CREATE_COMMAND, Example, Report
from demo.translate_tab import attention_view, translate_tab
from demo.translation import TRANSLATE_COMMAND, Bergamot

logger = logging.getLogger(__name__)

TITLE = "Text classification: fine-tuned vs. from scratch"

THEME = gr.themes.Soft(
    primary_hue="indigo",
    secondary_hue="slate",
    font=["ui-sans-serif", "system-ui", "Segoe UI", "Roboto", "Helvetica", "Arial", "sans-serif"],
    font_mono=["ui-monospace", "SFMono-Regular", "Menlo", "Consolas", "monospace"],
)
CSS = """
.gradio-container {max-width: 1180px !important; margin: auto;}
#status p {color: #b91c1c;}
#latency p {color: #475569; font-size: 0.95em;}
.label-panel {min-height: 220px;}
#report table {font-size: 0.92em;}
#report th, #report td {word-break: normal !important; overflow-wrap: normal !important; hyphens: none;}
.reference textarea, .reference input {border: none !important; box-shadow: none !important;
  background: transparent !important; padding-left: 0 !important; font-weight: 600;}
"""


def header(
    models: dict[str, Any], report: Report | None, problems: list[str], translators: dict[str, Any] | None = None
) -> str:
    translators = translators or {}
    lines = ["# Fine-tuned BERT vs. a Transformer trained from scratch"]
    if translators and not models:
        lines = ["# Portuguese to English: a Transformer trained from scratch vs. bergamot"]
    if models:
        run = next(iter(models.values())).run
        options = run["data"].get("options") or {}
        task = options.get("task") or Path(str(options.get("train_file") or "your data")).name
        lines.append(
            f"Type a text and see how each model classifies it. Task **{task}**, classes: "
            + ", ".join(f"`{label}`" for label in run["data"]["labels"])
            + "."
        )
    elif not translators:
        lines.append(
            f"**No trained models are loaded.** Create a report with `{CREATE_COMMAND}` (trains both models on "
            "SST-2 and writes `reports/sst2/`), then start this app again with `make app`, or point it at runs "
            "with `python app.py --runs DIR`."
        )
    if translators:
        lines.append(
            "Type a Portuguese sentence in the Translate tab and compare the translations of "
            + ", ".join(f"`{name}`" for name in translators)
            + " and of the reference system `bergamot`."
        )
    if report is not None:
        lines.append(f"Serving the report in `{report.directory}`.")
    lines.extend(f"> ⚠️ {problem}" for problem in problems)
    return "\n\n".join(lines)


def build_demo(
    models: dict[str, Any],
    report: Report | None,
    max_chars: int = DEFAULT_MAX_CHARS,
    examples: list[Example] | None = None,
    problems: list[str] | None = None,
    translators: dict[str, Any] | None = None,
    reference: Bergamot | None = None,
) -> gr.Blocks:
    """The whole page over already loaded models; prediction callbacks close over `models` and `translators`.

    Args:
        models: classifiers keyed by name (`finetune`, `scratch`, and any other, such as `scratch-distilled`);
            any may be missing.
        report: the report to show, or None.
        examples: test-split examples; default: the report's.
        translators: translation models keyed by name; with any, a Translate tab (and no Classify tab unless
            classifiers are loaded too).
        reference: the reference translation system; default: `bergamot`, loaded on its first request.
    """
    examples = report.examples if examples is None and report is not None else examples or []
    translators = translators or {}
    page_title = "Translation: from scratch vs. bergamot" if translators and not models else TITLE
    with gr.Blocks(title=page_title) as demo:
        gr.Markdown(header(models, report, problems or [], translators))
        if models or not translators:
            _classify_tab(models, examples, max_chars)
        if translators:
            chosen = report.translations if report is not None else []
            translate_tab(translators, reference or Bergamot(), chosen, max_chars)
        with gr.Tab("Report", elem_id="report"):
            _report_tab(report, models, translators)
    return demo


def model_choices(models: dict[str, Any]) -> list[tuple[str, str]]:
    """The Classify tab's radio entries, (label, value): every model together, then each model on its own
    (`finetune` and `scratch` marked when they are not loaded)."""
    together = f"All {len(models)}, side by side" if len(models) > 2 else "Both, side by side"
    alone = [(title(name) + ("" if name in models else " (not loaded)"), name) for name in model_names(models)]
    return [(together, BOTH), *alone]


def draw_attention(found: Any, layer: int, head: int) -> Any:
    """The heatmap of what `explain` found, or None; a layer or head the model lacks (the choosers are sized
    for the deepest model) falls back to its last layer, or the mean over its heads."""
    if not found:
        return None
    layers, heads = found[1].shape[:2]
    return attention_figure(*found, min(layer, layers - 1), head if head < heads else -1)


def _classify_tab(models: dict[str, Any], examples: list[Example], max_chars: int) -> None:
    """The Classify tab inside the current `gr.Blocks` and its `/classify` endpoint; callbacks close over `models`."""
    names = model_names(models)
    probes = [explain(model, "attention", max_chars) for model in models.values() if hasattr(model, "explain")]
    shapes = [probe[1].shape[:2] for probe in probes if probe]
    layers = max((shape[0] for shape in shapes), default=0)  # the choosers fit the deepest, widest model
    heads = max((shape[1] for shape in shapes), default=0)

    def run_classify(text: str, model: str) -> tuple[dict[str, Any], dict[str, float]]:
        """Classifies `text` with `model` (`both` or a model's name): {model: {label: probability}} or {"error"}."""
        return classify_timed(text, model, models, max_chars)

    def show_results(result: dict[str, Any], latencies: dict[str, float]) -> tuple[Any, ...]:
        return render_results(result, latencies, names)

    def run_explain(text: str, choice: str, layer: int, head: int) -> tuple[Any, Any]:
        found = explain(attention_model(models, choice), text, max_chars)
        return found, draw_attention(found, layer, head)

    with gr.Tab("Classify"):
        with gr.Row(equal_height=False):
            with gr.Column(scale=5):
                text = gr.Textbox(
                    label="Text",
                    lines=4,
                    placeholder="Type a sentence, e.g. a short film review",
                    info=f"At most {max_chars:,} characters.",
                    elem_id="text",
                )
                choice = gr.Radio(
                    model_choices(models),
                    value=BOTH if len(models) != 1 else next(iter(models)),
                    label="Model",
                    elem_id="choice",
                )
                button = gr.Button("Classify", variant="primary", elem_id="classify")
            with gr.Column(scale=7):
                status = gr.Markdown(elem_id="status")
                with gr.Row():
                    panels = [
                        gr.Label(
                            label=title(name),
                            num_top_classes=8,
                            elem_id=f"label-{name}",
                            elem_classes="label-panel",
                        )
                        for name in names
                    ]
                latency = gr.Markdown(elem_id="latency")
                gold = gr.Textbox(  # filled by the examples below: a reference beside the answers, not an input
                    label="Gold label (test split)",
                    interactive=False,
                    visible=any(e.gold is not None for e in examples),
                    elem_id="gold",
                    elem_classes="reference",
                )
                with gr.Accordion("API response (JSON)", open=False):
                    answer = gr.JSON(label="classify", elem_id="answer")
        if examples:
            disagree = [e for e in examples if e.disagreement]
            agree = [e for e in examples if not e.disagreement]
            who = "the two models" if len(models) <= 2 else "the models"
            for rows, heading in ((disagree, f"Test texts {who} disagree on"), (agree, "More test texts")):
                if rows:
                    gr.Examples(
                        [[e.text, "" if e.gold is None else str(e.gold)] for e in rows],
                        inputs=[text, gold],
                        label=heading,
                    )
        if probes:
            with gr.Accordion("Where the from-scratch model looks (attention)", open=bool(shapes)):
                if not shapes:
                    gr.Markdown("The from-scratch model did not return attention weights.")
                layer, head, heatmap = attention_view(layers, heads, "Attention", "attention")
                found = gr.State(None)
        latencies = gr.State({})

    # Unprocessed, so that whatever a client sends (an unknown model, a number for text) reaches `classify`,
    # which answers it with {"error": ...}, instead of failing in Gradio's own checks with a traceback.
    event = gr.on(
        [button.click, text.submit],
        run_classify,
        [text, choice],
        [answer, latencies],
        api_name="classify",
        preprocess=False,
    )
    text.input(None, None, gold, js="() => ''")  # an edited text no longer has the example's gold label
    event.then(show_results, [answer, latencies], [*panels, latency, status], api_visibility="private")
    if probes:
        event.then(run_explain, [text, choice, layer, head], [found, heatmap], api_visibility="private")
        for chooser in (layer, head):
            chooser.change(draw_attention, [found, layer, head], heatmap, api_visibility="private")


def _report_tab(report: Report | None, models: dict[str, Any], translators: dict[str, Any]) -> None:
    """The report's sections, each heading once; a figure sits in the section that reads it, the others at the end."""
    figures = {path.name: path for path in report.figures} if report is not None else {}
    if report is None:
        gr.Markdown(
            f"No report to show. `{CREATE_COMMAND}` trains both models and writes one to `reports/<task>/` "
            f"(`{TRANSLATE_COMMAND}` a translation report); `python app.py --report DIR` shows another."
        )
    elif report.is_translation:
        scores = figures.pop(translation_figures.SCORES, None)
        _section("Translation quality", report_view.translation_scores, report.results, "translation-scores", scores)
        _section("Differences", report_view.translation_comparisons, report.results, optional=True)
        domains = figures.pop(translation_figures.PER_DOMAIN, None)
        _section("By domain", report_view.translation_domains, report.results, figure=domains, optional=True)
    else:
        _section("Verdict", report_view.verdict, report.results, elem_id="verdict")
        _section("Headline", report_view.headline, report.results)
        _section("Diagnosis", report_view.diagnosis, report.results, optional=True)
        _section("Distillation", report_view.distillation, report.results, optional=True)
        curves = figures.pop(TRAINING_CURVES, None)
        _section("Training time", report_view.training_time, report.results, figure=curves, optional=True)
        tuning = figures.pop(TUNING_FIGURE, None)
        _section("Tuning", report_view.tuning, report.results, figure=tuning, optional=True)
    runs = report_view.report_runs(report, models, translators)
    translation_runs = {name: run for name, run in runs.items() if run.get("task_kind") == TASK_KIND}
    classification_runs = {name: run for name, run in runs.items() if name not in translation_runs}
    if classification_runs:
        _section("The runs", report_view.runs_table, classification_runs)
    if translation_runs:
        _section("The translation runs", report_view.translation_runs_table, translation_runs)
    if report is not None and report.curve:
        _section("Learning curve", report_view.curve_summary, report.curve, figure=figures.pop(CURVE_FIGURE, None))
    if report is not None and (report.directory / "report.html").is_file():
        gr.DownloadButton("Download the full report (HTML)", str(report.directory / "report.html"), size="sm")
    if figures:
        gr.Markdown("## Figures")
        for path in figures.values():
            gr.Markdown(f"### {report_view.figure_title(path.name, report.is_translation)}")
            _figure(path)


def _section(
    title: str,
    render: Any,
    content: dict[str, Any],
    elem_id: str | None = None,
    figure: Path | None = None,
    optional: bool = False,
) -> None:
    """A heading, what `render` makes of `content` (or what is missing from a file another version wrote) and the
    `figure` that goes with it; an `optional` section with nothing to show (a report without tuning) is left out."""
    try:
        text = render(content)
    except (KeyError, TypeError, ValueError) as error:
        logger.warning("Cannot show the report's %s: %s", title.lower(), error)
        text = (
            f"The report's files lack {error}, which this version shows; recreate them with `{CREATE_COMMAND}` "
            "or `python -m compare report`."
        )
    if text or figure is not None or not optional:
        text = text.removeprefix(f"### {title}\n\n")  # a table named as its section: the heading once
        gr.Markdown(f"## {title}\n\n{text}", elem_id=elem_id)
    if figure is not None:
        _figure(figure)


def _figure(path: Path) -> None:
    """A report figure across the page's width (the report draws it for that width), never cropped or squeezed."""
    gr.Image(
        str(path),
        show_label=False,
        interactive=False,
        format="png",
        buttons=["fullscreen", "download"],
    )
