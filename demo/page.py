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
from core.task_kinds import CLASSIFICATION, TRANSLATION
from demo import report_view
from demo.kinds import shown
from demo.prediction import (
    BOTH,
    DEFAULT_MAX_CHARS,
    WARM_UP_PAIR,
    attention_figure,
    attention_model,
    attribution,
    attribution_html,
    classify_timed,
    explain,
    model_names,
    render_results,
    title,
)
from demo.sources import CREATE_COMMAND, Example, Report
from demo.task import Task, page_task
from demo.translate_tab import attention_view, translate_tab
from demo.translation import TRANSLATE_COMMAND, Bergamot

logger = logging.getLogger(__name__)

TITLE = "Text classification: fine-tuned vs. from scratch"
# How the report tab lists the runs of each task (`core.task_kinds`): its section's title and table.
RUNS_SECTIONS = {
    CLASSIFICATION: ("The runs", report_view.runs_table),
    TRANSLATION: ("The translation runs", report_view.translation_runs_table),
}

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
.why {display: flex; gap: 12px;}
.why-column {flex: 1; border: 1px solid #e2e8f0; border-radius: 6px; padding: 8px; line-height: 1.9;}
.why-title {font-size: 0.9em; color: #475569; margin-bottom: 4px;}
.why-legend {font-size: 0.85em; color: #64748b;}
.attr {padding: 1px 2px; border-radius: 3px;}
#report table {font-size: 0.92em;}
#report th, #report td, .label-panel th, .label-panel td {word-break: normal !important;
  overflow-wrap: normal !important; hyphens: none;}
.label-panel table {font-size: 0.92em;}
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
        lines.append(task_line(page_task(models), next(iter(models.values())).labels))
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


def task_line(task: Task, labels: list[str]) -> str:
    """What to type and what the models answer (`ShownKind.invitation`, `ShownKind.answer_space`), for the page's header."""
    typed = f"two texts (`{task.text_column}` and `{task.pair_column}`)" if task.has_pairs else "a text"
    invitation = shown(task.kind).invitation("them" if task.has_pairs else "it")
    return f"Type {typed} and {invitation}. Task **{task.name}**, {shown(task.kind).answer_space(labels, task.value_range)}."


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
    """The Classify tab inside the current `gr.Blocks` and its `/classify` endpoint; callbacks close over `models`.

    A pair task gets a second text box, labelled, like the first, with the column the runs read it from; a
    single-label answer shows as a `gr.Label` per model, the other kinds as Markdown (`prediction.panel`).
    """
    names = model_names(models)
    task = page_task(models)
    probe_pair = WARM_UP_PAIR if task.has_pairs else None
    probes = [explain(model, "attention", max_chars, probe_pair) for model in models.values() if model.attends]
    shapes = [probe[1].shape[:2] for probe in probes if probe]
    layers = max((shape[0] for shape in shapes), default=0)  # the choosers fit the deepest, widest model
    heads = max((shape[1] for shape in shapes), default=0)

    def run_classify(
        text: str, model: str, text_pair: str | None = None, attributions: bool = False, min_confidence: float = 0.0
    ) -> tuple[dict[str, Any], dict[str, float]]:
        """Classifies `text` (and `text_pair`, for a pair task) with `model` (`both` or a model's name):
        {model: answer} or {"error": message}; each answer with its `confidence`, `abstained` below
        `min_confidence`, and with `attributions` true its `attribution` (the words and their scores)."""
        return classify_timed(text, model, models, max_chars, text_pair, attributions, min_confidence)

    def show_results(
        result: dict[str, Any], latencies: dict[str, float], min_confidence: float = 0.0
    ) -> tuple[Any, ...]:
        return render_results(result, latencies, names, task, min_confidence or 0.0)

    def highlight(text: str, text_pair: str, result: dict[str, Any]) -> str:
        """Each answering model's words, highlighted by their attribution towards its answer, side by side."""
        if "error" in result:
            return ""
        pair = text_pair if task.has_pairs else None
        return attribution_html(
            {name: attribution(models[name], text, pair) for name in result if name in models}, names
        )

    def run_explain(text: str, choice: str, text_pair: str, layer: int, head: int) -> tuple[Any, Any]:
        found = explain(attention_model(models, choice), text, max_chars, text_pair)
        return found, draw_attention(found, layer, head)

    limit = f"At most {max_chars:,} characters."
    with gr.Tab("Classify"):
        with gr.Row(equal_height=False):
            with gr.Column(scale=5):
                text = gr.Textbox(
                    label=f"First text: {task.text_column}" if task.has_pairs else "Text",
                    lines=3 if task.has_pairs else 4,
                    placeholder="Type a sentence" if task.has_pairs else "Type a sentence, e.g. a short film review",
                    info=limit,
                    elem_id="text",
                )
                text_pair = gr.Textbox(  # hidden for single texts; the API still takes it, to refuse a pair
                    label=f"Second text: {task.pair_column}",
                    lines=3,
                    placeholder="Type the sentence to pair with the first",
                    info=limit,
                    visible=task.has_pairs,
                    elem_id="text-pair",
                )
                choice = gr.Radio(
                    model_choices(models),
                    value=BOTH if len(models) != 1 else next(iter(models)),
                    label="Model",
                    elem_id="choice",
                )
                min_confidence = gr.Slider(
                    0.0,
                    1.0,
                    value=0.0,
                    step=0.05,
                    label="Abstain below this confidence",
                    info="A model less sure of its answer than this says so (0: always answers).",
                    visible=not task.kind.gives_values,  # a value comes with no confidence
                    elem_id="min-confidence",
                )
                attributions = gr.Checkbox(False, visible=False, elem_id="attributions")  # the API's flag
                button = gr.Button("Classify", variant="primary", elem_id="classify")
            with gr.Column(scale=7):
                status = gr.Markdown(elem_id="status")
                with gr.Row():
                    panels = [answer_panel(name, task) for name in names]
                latency = gr.Markdown(elem_id="latency")
                gr.Markdown("**Why: the words each answer rests on** (Integrated Gradients)", elem_id="why-title")
                why = gr.HTML(elem_id="why")
                gold = gr.Textbox(  # filled by the examples below: a reference beside the answers, not an input
                    label=f"{shown(task.kind).gold_title} (test split)",
                    interactive=False,
                    visible=any(e.gold is not None for e in examples),
                    elem_id="gold",
                    elem_classes="reference",
                )
                with gr.Accordion("API response (JSON)", open=False):
                    answer = gr.JSON(label="classify", elem_id="answer")
        if examples:
            _examples(examples, task, len(models), [text, text_pair, gold])
        if probes:
            with gr.Accordion("Attention: where the from-scratch model looks (not an explanation)", open=False):
                if not shapes:
                    gr.Markdown("The from-scratch model did not return attention weights.")
                layer, head, heatmap = attention_view(layers, heads, "Attention", "attention")
                found = gr.State(None)
        latencies = gr.State({})

    # Unprocessed, so that whatever a client sends (an unknown model, a number for text) reaches `classify`,
    # which answers it with {"error": ...}, instead of failing in Gradio's own checks with a traceback.
    event = gr.on(
        [button.click, text.submit, text_pair.submit],
        run_classify,
        [text, choice, text_pair, attributions, min_confidence],
        [answer, latencies],
        api_name="classify",
        preprocess=False,
    )
    for box in (text, text_pair):
        box.input(None, None, gold, js="() => ''")  # an edited text no longer has the example's gold label
    event.then(show_results, [answer, latencies, min_confidence], [*panels, latency, status], api_visibility="private")
    event.then(highlight, [text, text_pair, answer], why, api_visibility="private")
    if probes:
        event.then(run_explain, [text, choice, text_pair, layer, head], [found, heatmap], api_visibility="private")
        for chooser in (layer, head):
            chooser.change(draw_attention, [found, layer, head], heatmap, api_visibility="private")


def answer_panel(name: str, task: Task) -> Any:
    """Where a model's answer shows: a `gr.Label` of class probabilities where the kind shows one (`ShownKind.label_panel`),
    else Markdown."""
    if shown(task.kind).label_panel:
        return gr.Label(label=title(name), num_top_classes=8, elem_id=f"label-{name}", elem_classes="label-panel")
    with gr.Column(min_width=160, elem_classes="label-panel"):
        gr.Markdown(f"**{title(name)}**", elem_classes="panel-title")
        return gr.Markdown(elem_id=f"label-{name}")


def _examples(examples: list[Example], task: Task, count: int, inputs: list[Any]) -> None:
    """The test examples to click: disagreements first, or for a kind that gives values those the models differ most
    on."""
    text, text_pair, gold = inputs
    fields = [text, text_pair, gold] if task.has_pairs else [text, gold]

    def row(e: Example) -> list[str]:
        return [e.text, *([e.text_pair or ""] if task.has_pairs else []), "" if e.gold is None else e.gold]

    what = "pairs" if task.has_pairs else "texts"
    who = "the two models" if count <= 2 else "the models"
    if task.kind.gives_values:
        groups = [(examples, f"Test {what}, those {who} differ most on first")]
    else:
        disagree = [e for e in examples if e.disagreement]
        agree = [e for e in examples if not e.disagreement]
        groups = [(disagree, f"Test {what} {who} disagree on"), (agree, f"More test {what}")]
    for rows, heading in groups:
        if rows:
            gr.Examples([row(e) for e in rows], inputs=fields, label=heading)


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
    for task, (heading, table) in RUNS_SECTIONS.items():
        of_task = {name: run for name, run in runs.items() if run.task is task}
        if of_task:
            _section(heading, table, of_task)
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
