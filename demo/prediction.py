"""Predicting in the demo: plain functions the page's callbacks and the tests call directly.

Models are keyed by name: the classification sides' (`core.sides`: `finetune`, `scratch`), and any other the
report names (`scratch-distilled`).
`classify` is what the `/classify` endpoint returns (with `windows`, for a model reading a long text in windows, how
many it read and which decided); `warm_up` runs one prediction per model before the
server starts, so that the first latency a user sees is a real one, not graph tracing.
"""

from __future__ import annotations

import html
import logging
import reprlib
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from compare.render.faithfulness import highlighted_words
from core import sides
from demo.answers import answers
from demo.arguments import DEFAULT_MAX_CHARS
from demo.kinds import shown
from demo.sources import CREATE_COMMAND
from demo.task import Task, page_task, task_of

logger = logging.getLogger(__name__)

BOTH = "both"
HEATMAP_TOKENS = 48
PADDING_TOKENS = frozenset({"", "[PAD]", "<pad>"})
WARM_UP_TEXT = "A first text, so that the model has traced its prediction before anyone asks."
WARM_UP_PAIR = "A second text, for a task of pairs."


def title(name: str) -> str:
    """How the page calls the model named `name`: its side's title for the names `compare run` gives, else the name."""
    if name == sides.STUDENT:
        return f"{sides.get(sides.FROM_SCRATCH).title}, distilled"
    return sides.SIDES[name].title if name in sides.SIDES else name


def model_names(models: dict[str, Any]) -> list[str]:
    """The models the page offers, in panel order: the classification sides' whether loaded or not, then every
    other loaded model in load order."""
    names = sides.classifier_names()
    return [*names, *(name for name in models if name not in names)]


def warm_up(models: dict[str, Any]) -> list[str]:
    """One prediction per model (the path a request takes, with a pair for a pair task); returns what went wrong."""
    problems = []
    for name, model in models.items():
        start = time.perf_counter()
        try:
            predict(model, WARM_UP_TEXT, WARM_UP_PAIR if task_of(model.record).has_pairs else None)
        except Exception as error:  # noqa: BLE001 - shown on the page; each request will say so again
            logger.exception("The %s model failed its warm-up prediction", name)
            problems.append(f"The {name} model failed its first prediction: {error}")
            continue
        logger.info("Warmed up the %s model in %.0f ms", name, (time.perf_counter() - start) * 1000)
    return problems


def check_text(
    text: Any, max_chars: int, empty: str = "Type or paste some text to classify.", what: str = "text"
) -> str | None:
    """The message for input the models should not see (`empty` for no text), or None when the text is fine;
    `what` names the text in the message ("second text")."""
    if text is not None and not isinstance(text, str):  # a client's mistake: the page always sends a string
        return f"The {what} must be a string, got {reprlib.repr(text)} ({type(text).__name__})."
    if text is None or not text.strip():
        return empty
    if len(text) > max_chars:
        return (
            f"The {what} has {len(text):,} characters; this demo accepts at most {max_chars:,}. "
            "Shorten it, or start the app with a larger --max-chars."
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:  # only a lone surrogate cannot be encoded; tokenizers fail on it obscurely
        return (
            f"The {what} holds characters that are not valid Unicode (a lone surrogate at character "
            f"{error.start + 1:,}); paste it again as plain text."
        )
    return None


def check_inputs(text: Any, text_pair: Any, task: Task, max_chars: int) -> str | None:
    """`check_text` for the text and, for a pair task, the second text; a second text for a task of single texts
    is refused too, rather than silently ignored."""
    problem = check_text(text, max_chars)
    if problem or task.has_pairs:
        empty = f"This task compares two texts: type the second one ({task.pair_column}) too."
        return problem or check_text(text_pair, max_chars, empty, "second text")
    if text_pair is None or text_pair == "":  # what the page sends from its hidden second box
        return None
    return (
        f"The loaded runs classify single texts, not pairs: send no text_pair (got {reprlib.repr(text_pair)}), "
        "or start the app with runs of a pair task."
    )


def predict(model: Any, text: str, text_pair: str | None = None) -> dict[str, Any]:
    """`model`'s answer (`demo.answers`) for one text, or one pair; raises if the output is unusable."""
    return answers(model, [text], None if text_pair is None else [text_pair])[0]


def attribution(model: Any, text: str, text_pair: str | None = None) -> dict[str, Any] | None:
    """`model`'s Integrated Gradients for what it answered (`core.attribution`), as the `/classify` endpoint returns
    it (`Attribution.as_dict`); None for a model that cannot attribute, or when attributing fails (the answer stands)."""
    if not model.attributes:
        return None
    try:
        [explained] = model.attribute([text], None if text_pair is None else [text_pair])
    except Exception:  # noqa: BLE001 - the highlighting is optional; the answer above still stands
        logger.exception("attribute failed on a %d-character text", len(text))
        return None
    return explained.as_dict()


def confidence(answer: dict[str, Any], kind: Any) -> float | None:
    """How sure a model's answer is (`ShownKind.confidence`): what the app abstains by; None for a value."""
    return shown(kind).confidence(answer)


def check_min_confidence(min_confidence: Any) -> str | None:
    """The message for a confidence the app cannot abstain below, or None."""
    if isinstance(min_confidence, bool) or not isinstance(min_confidence, int | float) or not 0 <= min_confidence <= 1:
        return f"min_confidence must be a number from 0 to 1, got {reprlib.repr(min_confidence)}."
    return None


def classify_timed(
    text: Any,
    choice: Any,
    models: dict[str, Any],
    max_chars: int = DEFAULT_MAX_CHARS,
    text_pair: Any = None,
    attributions: Any = False,
    min_confidence: Any = 0.0,
) -> tuple[dict[str, Any], dict[str, float]]:
    """`classify`, plus each model's latency in milliseconds (the answer's, without its attribution)."""
    task = page_task(models)
    problem = check_inputs(text, text_pair, task, max_chars) or check_min_confidence(min_confidence or 0.0)
    if problem:
        return {"error": problem}, {}
    names = model_names(models)
    if choice != BOTH and choice not in names:
        return {"error": f"Unknown model {reprlib.repr(choice)}; choose one of {', '.join([BOTH, *names])}."}, {}
    loaded = [name for name in names if name in models]
    wanted = (loaded if len(loaded) > 1 else names) if choice == BOTH else [choice]  # both: every loaded model
    missing = [name for name in wanted if name not in models]
    if missing:
        loaded = ", ".join(models) or "none"
        return {
            "error": f"The {' and '.join(missing)} model is not loaded (loaded: {loaded}). "
            f"Start the app with --runs pointing at a {missing[0]} run, or create runs with `{CREATE_COMMAND}`."
        }, {}
    pair = text_pair if task.has_pairs else None
    result, latencies = {}, {}
    for name in wanted:
        start = time.perf_counter()
        try:
            result[name] = predict(models[name], text, pair)
        except Exception as error:  # noqa: BLE001 - whatever a user types, the page answers instead of failing
            logger.exception("The %s model failed on a %d-character text", name, len(text))
            return {"error": f"The {name} model could not classify this text: {error}"}, {}
        latencies[name] = (time.perf_counter() - start) * 1000
    if min_confidence:
        sure = {name: confidence(result[name], task.kind) for name in wanted}
        result["abstained"] = {name: c for name, c in sure.items() if c is not None and c < min_confidence}
    read = {name: windows(models[name], text) for name in wanted if pair is None and reads_windows(models[name])}
    if read:
        result["windows"] = read
    if attributions is True:
        result["attributions"] = {name: attribution(models[name], text, pair) for name in wanted}
    return result, latencies


def reads_windows(model: Any) -> bool:
    """Whether `model` reads a long text in windows (`--long-text chunks`); a model that is no `BaseClassifier` does
    not say, and reads one."""
    reading = getattr(model, "reading", None)
    return reading is not None and reading.pools


def windows(model: Any, text: str) -> dict[str, int]:
    """How many windows `model` read `text` in (`read`) and which of them, counted from 1, decided its answer
    (`decided`: `BaseClassifier.windows_read`)."""
    count, decided = model.windows_read(text)
    return {"read": count, "decided": decided + 1}


def windows_line(result: dict[str, Any]) -> str:
    """The sentence that says how each model that reads in windows read the text ("" when none does)."""
    said = [
        f"{title(name)} read {found['read']} window{'s' if found['read'] != 1 else ''}; window {found['decided']} decided"
        for name, found in result.get("windows", {}).items()
    ]
    return " · ".join(said)


def classify(
    text: Any,
    choice: Any,
    models: dict[str, Any],
    max_chars: int = DEFAULT_MAX_CHARS,
    text_pair: Any = None,
    attributions: Any = False,
    min_confidence: Any = 0.0,
) -> dict[str, Any]:
    """What the `/classify` endpoint returns: `{model: answer}` (`demo.answers`), or `{"error": message}`.

    With `min_confidence` above 0 (up to 1), also `abstained`: `{model: confidence}` for each model less sure of its
    answer than that (`ShownKind.confidence`), which the page says instead of letting the answer stand; with
    `attributions` true, also `attributions`: `{model: {"target", "words", "scores", "gap"}}`, each model's words and
    their Integrated Gradients towards its answer (`core.attribution`)."""
    return classify_timed(text, choice, models, max_chars, text_pair, attributions, min_confidence)[0]


def abstentions(result: dict[str, Any], min_confidence: float) -> str:
    """The sentence the page shows for the models that abstained ("" for none)."""
    said = [
        f"{title(name)} abstains: its confidence {sure:.2f} is below the {min_confidence:.2f} you set."
        for name, sure in result.get("abstained", {}).items()
    ]
    return " ".join(f"**{sentence}**" for sentence in said)


def attribution_html(found: dict[str, dict[str, Any] | None], names: Sequence[str]) -> str:
    """Each model's words highlighted by their attribution towards its answer, side by side, from `{model:
    attribution}` (`classify`'s `attributions`); "" for none."""
    columns = []
    for name in names:
        explained = found.get(name)
        if not explained:
            continue
        target = "its value" if explained["target"] is None else f"<b>{html.escape(str(explained['target']))}</b>"
        words = highlighted_words(explained["words"], explained["scores"]) or "<i>no words</i>"
        columns.append(
            f'<div class="why-column"><div class="why-title">{html.escape(title(name))} → {target}</div>'
            f'<div class="why-words">{words}</div></div>'
        )
    if not columns:
        return ""
    legend = (
        '<p class="why-legend">Integrated Gradients: green words pushed the model towards what it answered, red '
        "ones away from it; the stronger the colour, the larger the push (relative to the text's largest).</p>"
    )
    return f'<div class="why">{"".join(columns)}</div>{legend}'


def render_results(
    result: dict[str, Any],
    latencies: dict[str, float],
    names: Sequence[str],
    task: Task | None = None,
    min_confidence: float = 0.0,
) -> tuple[Any, ...]:
    """One panel per model in `names` (in that order), the latency line and the status message (an error, or which
    models abstained below `min_confidence`) for one `classify` result; a model that did not answer gets an empty
    panel. A panel is what the kind shows (`ShownKind.panel`): the
    answer itself for a `gr.Label` (single label), else Markdown."""
    task = task or Task()
    if "error" in result:
        return *(None for _ in names), "", f"**{result['error']}**"
    panels = tuple(panel(result.get(name), task) for name in names)
    latency = " · ".join(f"{title(name)}: **{ms:.1f} ms**" for name, ms in latencies.items())
    read = windows_line(result)
    latency = f"Latency (one text, this machine): {latency}" + (f"  \nLong text: {read}." if read else "")
    return *panels, latency, abstentions(result, min_confidence)


def panel(answer: dict[str, Any] | None, task: Task) -> Any:
    """What a model's panel shows of its answer (`ShownKind.panel`); nothing for a model that did not answer."""
    return None if answer is None else shown(task.kind).panel(answer, task.value_range)


def attention_model(models: dict[str, Any], choice: Any) -> Any:
    """The model whose attention goes with `choice`: the chosen model when it can explain itself (a
    from-scratch one), else for `both` the `scratch` model; None when there is none."""
    chosen = models.get(choice) if isinstance(choice, str) else None
    if chosen is not None and chosen.attends:
        return chosen
    return models.get(sides.FROM_SCRATCH) if choice == BOTH else None


def explain(
    model: Any, text: Any, max_chars: int = DEFAULT_MAX_CHARS, text_pair: Any = None
) -> tuple[list[str], np.ndarray] | None:
    """A from-scratch model's tokens and attention `(layers, heads, T, T)` over one text, or over a pair's one
    sequence for a pair task; None when there is none."""
    if model is None or not model.attends:
        return None
    task = task_of(model.record)
    if check_inputs(text, text_pair if task.has_pairs else None, task, max_chars):
        return None
    try:
        tokens, attention = model.explain(text, text_pair) if task.has_pairs else model.explain(text)
    except Exception:  # noqa: BLE001 - the heatmap is optional; the prediction above still stands
        logger.exception("explain failed on a %d-character text", len(text))
        return None
    attention = np.asarray(attention, dtype=np.float32)
    if attention.ndim != 4 or attention.shape[2:] != (len(tokens), len(tokens)):
        logger.warning("explain returned %d tokens and attention of shape %s", len(tokens), attention.shape)
        return None
    keep = [i for i, token in enumerate(tokens) if str(token) not in PADDING_TOKENS]  # padding says nothing
    if not keep:
        return None
    return [str(tokens[i]) for i in keep], attention[:, :, keep][:, :, :, keep]


def attention_figure(tokens: list[str], attention: np.ndarray, layer: int, head: int) -> Figure:
    """A heatmap of one layer's attention: rows are query tokens, columns the tokens they attend to.

    Only the first `HEATMAP_TOKENS` tokens are drawn, so that every token stays legible.

    Args:
        attention: `(layers, heads, T, T)`.
        head: a head index, or -1 for the mean over heads.
    """
    weights = attention[layer].mean(axis=0) if head < 0 else attention[layer, head]  # (T, T)
    n = min(len(tokens), HEATMAP_TOKENS)
    weights = weights[:n, :n]  # (n, n)
    side = min(11.0, 3.0 + 0.2 * n)
    figure = Figure(figsize=(side + 1.2, side), layout="constrained")
    axes = figure.subplots()
    image = axes.imshow(weights, cmap="viridis", vmin=0.0, vmax=max(float(weights.max()), 1e-6), aspect="equal")
    names = [t if len(t) <= 14 else t[:13] + "…" for t in tokens[:n]]
    fontsize = max(6.0, min(10.0, 300 / max(n, 1)))
    axes.set_xticks(range(n), names, rotation=90, fontsize=fontsize)
    axes.set_yticks(range(n), names, fontsize=fontsize)
    axes.set_xlabel("attends to")
    axes.set_ylabel("token")
    what = "mean over heads" if head < 0 else f"head {head + 1}"
    shown = f" (first {n} of {len(tokens)} tokens)" if n < len(tokens) else ""
    axes.set_title(f"From-scratch model, layer {layer + 1}, {what}{shown}")
    figure.colorbar(image, ax=axes, shrink=0.8, label="attention weight")
    return figure
