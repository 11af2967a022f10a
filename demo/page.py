"""Gradio demo: type a text and see what the fine-tuned and the from-scratch model say, side by side.

    python app.py                                   # serves the newest report under reports/
    python app.py --report reports/sst2             # a report directory and its runs
    python app.py --runs reports/sst2/runs          # run directories, or a folder of runs
    python app.py --host 0.0.0.0 --port 8080 --max-chars 2000 --share

Runs are read once at start through `core.classifier` (never through training code). The page has a
classifier tab (one `gr.Label` per model, latency per model, test-split examples including the ones the
two models disagree on, and the from-scratch model's attention as a heatmap) and a report tab (headline
table, verdict, figures, and what each run was trained on). The same prediction is an API endpoint:

    >>> from gradio_client import Client                                  # doctest: +SKIP
    >>> Client("http://127.0.0.1:7860/").predict("a gripping film", "both", api_name="/classify")  # doctest: +SKIP
    {'finetune': {'negative': 0.03, 'positive': 0.97}, 'scratch': {'negative': 0.21, 'positive': 0.79}}
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import gradio as gr  # noqa: E402 - the environment above must be set before Gradio and TensorFlow load
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from core.args import parse_args  # noqa: E402
from core.classifier import find_runs, load  # noqa: E402
from core.rundir import read_run_json  # noqa: E402

logger = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parent
SIDES = ("finetune", "scratch")
CHOICES = ("both", "finetune", "scratch")
TITLES = {"finetune": "Fine-tuned BERT", "scratch": "From-scratch Transformer"}
DEFAULT_MAX_CHARS = 5000
CONCURRENCY = 4
CREATE_COMMAND = "make report"
EXAMPLES_PER_KIND = 6
EXAMPLE_MAX_CHARS = 300
LIVE_EXAMPLE_POOL = 128
HEATMAP_TOKENS = 48
PADDING_TOKENS = frozenset({"", "[PAD]", "<pad>"})


@dataclass
class AppArguments:
    """What the demo serves and where it listens."""

    report: str | None = field(
        default=None,
        metadata={
            "help": "A report directory (results.json, predictions.jsonl, figures, runs/). Default: the "
            "newest report under reports/."
        },
    )
    runs: list[str] | None = field(
        default=None, metadata={"help": "Run directories, or folders whose children are runs (overrides the report's)."}
    )
    host: str = field(
        default="127.0.0.1", metadata={"help": "Address to bind; 0.0.0.0 exposes the demo to your network."}
    )
    port: int = field(default=7860, metadata={"help": "Port to listen on."})
    share: bool = field(default=False, metadata={"help": "Also open a public Gradio share link (off by default)."})
    max_chars: int = field(default=DEFAULT_MAX_CHARS, metadata={"help": "Longest text accepted, in characters."})

    def __post_init__(self) -> None:
        if not 0 < self.port < 65536:
            raise ValueError(f"--port must be between 1 and 65535, got {self.port}.")
        if self.max_chars < 1:
            raise ValueError(f"--max-chars must be at least 1, got {self.max_chars}.")
        if not self.host.strip():
            raise ValueError("--host must not be empty; use 127.0.0.1 to serve this machine only.")


# --- the report a demo serves ---------------------------------------------------------------------------


@dataclass
class Example:
    """A test-split text with its gold label and, when a report holds them, each model's prediction."""

    text: str
    gold: str | None = None
    predictions: dict[str, str] = field(default_factory=dict)

    @property
    def disagreement(self) -> bool:
        return len(set(self.predictions.values())) > 1


@dataclass
class Report:
    """What the report tab shows: a report directory's results, figures, curve and chosen examples."""

    directory: Path
    results: dict[str, Any]
    figures: list[Path] = field(default_factory=list)
    curve: dict[str, Any] | None = None
    examples: list[Example] = field(default_factory=list)


def find_newest_report(roots: Iterable[Path]) -> Path | None:
    """The report directory (one holding results.json) under `roots` whose results were written last."""
    found = [p.parent for root in roots if root.is_dir() for p in root.glob("**/results.json")]
    return max(found, key=lambda d: (d / "results.json").stat().st_mtime, default=None)


def load_report(directory: str | Path) -> Report:
    """Reads a report directory: results.json (required), predictions.jsonl, *.png, curve.json."""
    directory = Path(directory)
    path = directory / "results.json"
    if not path.is_file():
        raise FileNotFoundError(
            f"{directory} is not a report directory: it has no results.json. Create one with `{CREATE_COMMAND}` "
            "or `python -m compare report --runs RUN RUN --output-dir DIR`."
        )
    results = json.loads(path.read_text(encoding="utf-8"))
    curve_path = directory / "curve.json"
    curve = json.loads(curve_path.read_text(encoding="utf-8")) if curve_path.is_file() else None
    predictions = directory / "predictions.jsonl"
    examples = pick_examples(read_predictions(predictions)) if predictions.is_file() else []
    return Report(directory, results, sorted(directory.glob("*.png")), curve, examples)


def read_predictions(path: Path) -> Iterator[Example]:
    """The rows of a report's predictions.jsonl as examples; unreadable lines are skipped."""
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            try:
                row = json.loads(line)
                predictions = {name: str(p["label"]) for name, p in row.get("predictions", {}).items()}
                yield Example(str(row["text"]), row.get("gold"), predictions)
            except (json.JSONDecodeError, KeyError, TypeError, AttributeError):
                continue


def pick_examples(rows: Iterable[Example], per_kind: int = EXAMPLES_PER_KIND) -> list[Example]:
    """Up to `per_kind` disagreements and `per_kind` agreements, short texts only, spread over gold labels.

    Rows are taken in file order, one gold label after another, so every class shows up when it can.
    """
    pools: dict[bool, dict[Any, list[Example]]] = {True: {}, False: {}}
    for row in rows:
        if row.text.strip() and len(row.text) <= EXAMPLE_MAX_CHARS:
            pools[row.disagreement].setdefault(row.gold, []).append(row)
    chosen = []
    for disagreement in (True, False):
        queues = list(pools[disagreement].values())
        taken: list[Example] = []
        while len(taken) < per_kind and any(queues):
            for queue in queues:
                if queue and len(taken) < per_kind:
                    taken.append(queue.pop(0))
        chosen.extend(taken)
    return chosen


def live_examples(models: dict[str, Any], seed: int = 0) -> list[Example]:
    """Examples from the runs' own test split when no report lists predictions; empty when it is not local.

    Only local data is read (a mirror under the run's data_dir or $TEXTCLS_DATA_DIR, or the run's files):
    the app never downloads. Both models label a seeded sample so disagreements can be shown.
    """
    from core.args import DataArguments
    from core.data import load_task

    if not models:
        return []
    run = next(iter(models.values())).run
    options = dict(run["data"].get("options") or {})
    try:
        if options.get("task"):
            data_dir = options.get("data_dir")
            if not (data_dir and (Path(data_dir) / options["task"]).is_dir()):
                options["data_dir"] = os.environ.get("TEXTCLS_DATA_DIR")
            if not (options["data_dir"] and (Path(options["data_dir"]) / options["task"]).is_dir()):
                return []
        elif not (options.get("train_file") and Path(options["train_file"]).is_file()):
            return []
        data = load_task(DataArguments(**options))
    except Exception as error:  # noqa: BLE001 - examples are optional; the demo works without them
        logger.warning("No examples from the test split: %s", error)
        return []
    split = data.splits["test"]
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(split))
    rows = [(split[int(i)]["text"], data.labels[split[int(i)]["label"]]) for i in order[: 4 * LIVE_EXAMPLE_POOL]]
    rows = [(text, gold) for text, gold in rows if text.strip() and len(text) <= EXAMPLE_MAX_CHARS][:LIVE_EXAMPLE_POOL]
    if not rows:
        return []
    texts = [text for text, _ in rows]
    predicted = {}
    for side, model in models.items():
        try:
            predicted[side] = [model.labels[i] for i in np.argmax(model.predict_proba(texts), axis=1)]
        except Exception as error:  # noqa: BLE001 - a model that fails here still gets its own error at predict time
            logger.warning("The %s model could not label the examples: %s", side, error)
    return pick_examples(
        Example(text, gold, {side: labels[i] for side, labels in predicted.items()})
        for i, (text, gold) in enumerate(rows)
    )


# --- loading runs ---------------------------------------------------------------------------------------


def resolve_sources(args: AppArguments, roots: Iterable[Path] | None = None) -> tuple[Path | None, list[Path]]:
    """The report directory and the run directories `args` ask for (see DESIGN.md's app.py options).

    With neither --report nor --runs, the newest report under `roots` (./reports, then reports/ beside
    this file) and its runs. Nothing found is not an error: the demo then says how to create a report.
    """
    report_dir = Path(args.report) if args.report else None
    if report_dir is None and not args.runs:
        roots = [Path.cwd() / "reports", ROOT / "reports"] if roots is None else roots
        report_dir = find_newest_report(roots)
        if report_dir is not None:
            logger.info("Serving the newest report: %s", report_dir)
    if args.runs:
        return report_dir, find_runs(args.runs)
    return report_dir, report_run_dirs(report_dir) if report_dir is not None else []


def report_run_dirs(report_dir: Path) -> list[Path]:
    """The runs a report was made from (results.json `runs`), else every run under its runs/ folder."""
    try:
        named = json.loads((report_dir / "results.json").read_text(encoding="utf-8")).get("runs") or {}
    except (OSError, ValueError, AttributeError):
        named = {}
    located = [locate_run(report_dir, name, str(path)) for name, path in named.items()]
    found = [path for path in located if path is not None]
    if found:
        return found
    return find_runs([report_dir / "runs"]) if (report_dir / "runs").is_dir() else []


def locate_run(report_dir: Path, name: str, path: str) -> Path | None:
    """A report's run by its recorded path (absolute, or relative to the report or the working directory),
    else by name under the report's runs/ folder, so a report directory that was moved still finds its runs."""
    recorded = Path(path)
    for candidate in (recorded, report_dir / recorded, report_dir / "runs" / recorded.name, report_dir / "runs" / name):
        if (candidate / "run.json").is_file():
            return candidate
    return None


def load_models(run_dirs: list[Path]) -> tuple[dict[str, Any], list[str]]:
    """Loads each run through `core.classifier.load`, keyed by side; returns them and what went wrong.

    A run that fails to load is reported on the page rather than stopping the demo.
    """
    models: dict[str, Any] = {}
    sources: dict[str, Path] = {}
    problems = []
    for run_dir in run_dirs:
        try:
            side = read_run_json(run_dir)["side"]
            if side in models:
                problems.append(f"Ignored {run_dir}: the {side} run {sources[side]} is already being served.")
                continue
            models[side], sources[side] = load(run_dir), Path(run_dir)
        except Exception as error:  # noqa: BLE001 - any loading failure is shown to the user as is
            logger.exception("Could not load %s", run_dir)
            problems.append(f"Could not load {run_dir}: {error}")
            continue
        logger.info("Loaded the %s run %s (labels %s)", side, run_dir, models[side].labels)
    return models, problems


# --- predicting (plain functions the tests call directly) -------------------------------------------------


def check_text(text: Any, max_chars: int) -> str | None:
    """The message for input the models should not see, or None when the text is fine."""
    if not isinstance(text, str) or not text.strip():
        return "Type or paste some text to classify."
    if len(text) > max_chars:
        return (
            f"The text has {len(text):,} characters; this demo accepts at most {max_chars:,}. "
            "Shorten it, or start the app with a larger --max-chars."
        )
    return None


def predict(model: Any, text: str) -> dict[str, float]:
    """`{label: probability}` for one text, in the model's label order; raises if the output is unusable."""
    probs = np.asarray(model.predict_proba([text]), dtype=np.float64)
    if probs.shape != (1, len(model.labels)) or not np.all(np.isfinite(probs)):
        raise ValueError(f"it returned probabilities of shape {probs.shape} that are not all finite")
    return {label: float(p) for label, p in zip(model.labels, probs[0])}


def classify_timed(
    text: Any, choice: Any, models: dict[str, Any], max_chars: int = DEFAULT_MAX_CHARS
) -> tuple[dict[str, Any], dict[str, float]]:
    """`classify`, plus each model's latency in milliseconds."""
    problem = check_text(text, max_chars)
    if problem:
        return {"error": problem}, {}
    if choice not in CHOICES:
        return {"error": f"Unknown model {choice!r}; choose one of {', '.join(CHOICES)}."}, {}
    sides = list(SIDES) if choice == "both" else [choice]
    missing = [side for side in sides if side not in models]
    if missing:
        loaded = ", ".join(models) or "none"
        return {
            "error": f"The {' and '.join(missing)} model is not loaded (loaded: {loaded}). "
            f"Start the app with --runs pointing at a {missing[0]} run, or create runs with `{CREATE_COMMAND}`."
        }, {}
    result, latencies = {}, {}
    for side in sides:
        start = time.perf_counter()
        try:
            result[side] = predict(models[side], text)
        except Exception as error:  # noqa: BLE001 - whatever a user types, the page answers instead of failing
            logger.exception("The %s model failed on a %d-character text", side, len(text))
            return {"error": f"The {side} model could not classify this text: {error}"}, {}
        latencies[side] = (time.perf_counter() - start) * 1000
    return result, latencies


def classify(text: Any, choice: Any, models: dict[str, Any], max_chars: int = DEFAULT_MAX_CHARS) -> dict[str, Any]:
    """What the `/classify` endpoint returns: `{model: {label: probability}}`, or `{"error": message}`."""
    return classify_timed(text, choice, models, max_chars)[0]


def render_results(result: dict[str, Any], latencies: dict[str, float]) -> tuple[Any, Any, str, str]:
    """The two label panels, the latency line and the status message for one `classify` result."""
    if "error" in result:
        return None, None, "", f"**{result['error']}**"
    panels = tuple(result.get(side) for side in SIDES)
    latency = " · ".join(f"{TITLES[side]}: **{ms:.1f} ms**" for side, ms in latencies.items())
    return *panels, f"Latency (one text, this machine): {latency}", ""


def explain(model: Any, text: Any, max_chars: int = DEFAULT_MAX_CHARS) -> tuple[list[str], np.ndarray] | None:
    """The from-scratch model's tokens and attention `(layers, heads, T, T)`, or None when there is none."""
    if model is None or not hasattr(model, "explain") or check_text(text, max_chars):
        return None
    try:
        tokens, attention = model.explain(text)
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


# --- the report tab -------------------------------------------------------------------------------------


def percent(value: Any, digits: int = 1) -> str:
    return f"{100 * value:.{digits}f}%" if isinstance(value, int | float) and math.isfinite(value) else "–"


def interval(value: Any, ci: Any) -> str:
    if isinstance(ci, list | tuple) and len(ci) == 2:
        return f"{percent(value)} ({percent(ci[0])} – {percent(ci[1])})"
    return percent(value)


def number(value: Any, unit: str = "", digits: int = 1) -> str:
    if not isinstance(value, int | float) or not math.isfinite(value):
        return "–"
    if unit == "B":
        for size, name in ((1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
            if value >= size:
                return f"{value / size:.{digits}f} {name}"
        return f"{value:.0f} B"
    if isinstance(value, int) or float(value).is_integer() and abs(value) >= 1000:
        return f"{int(value):,}{unit}"
    return f"{value:,.{digits}f}{unit}"


def headline_table(results: dict[str, Any]) -> str:
    """The report's headline as two Markdown tables: quality (with 95% intervals and baselines), then cost."""
    models = results.get("models", {})
    quality = [
        "| Model | Accuracy (95% CI) | Macro F1 (95% CI) | Weighted F1 | MCC | ECE | Log loss |",
        "|:---|:---|:---|---:|---:|---:|---:|",
    ]
    for name, m in models.items():
        quality.append(
            f"| **{name}** | {interval(m.get('accuracy'), m.get('accuracy_ci'))} | "
            f"{interval(m.get('macro_f1'), m.get('macro_f1_ci'))} | {percent(m.get('weighted_f1'))} | "
            f"{number(m.get('mcc'), digits=3)} | {number(m.get('ece'), digits=3)} | {number(m.get('log_loss'), digits=3)} |"
        )
    for name, b in results.get("baselines", {}).items():
        label = {"majority": "majority class", "tfidf_logreg": "TF-IDF + logistic regression"}.get(name, name)
        quality.append(f"| *baseline: {label}* | {percent(b.get('accuracy'))} | {percent(b.get('macro_f1'))} | | | | |")
    cost = [
        "| Model | Parameters | On disk | Training time | Latency p50 | Latency p95 | Throughput |",
        "|:---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, m in models.items():
        cost.append(
            f"| **{name}** | {number(m.get('params'))} | {number(m.get('disk_bytes'), 'B')} | "
            f"{number(m.get('train_seconds'), ' s')} | {number(m.get('latency_p50_ms'), ' ms')} | "
            f"{number(m.get('latency_p95_ms'), ' ms')} | {number(m.get('throughput_per_s'), ' texts/s')} |"
        )
    return "\n".join(quality) + "\n\n**Cost**\n\n" + "\n".join(cost)


def verdict(results: dict[str, Any]) -> str:
    """One paragraph that says which model is better, by how much and how sure the report is."""
    c = results.get("comparison") or {}
    a, b = c.get("a"), c.get("b")
    diff, ci = c.get("accuracy_diff"), c.get("accuracy_diff_ci")
    if a is None or b is None or not isinstance(diff, int | float):
        return "The report holds no comparison of two models."
    points = f"{100 * diff:+.1f} points"
    span = f"[{100 * ci[0]:+.1f}, {100 * ci[1]:+.1f}]" if isinstance(ci, list | tuple) and len(ci) == 2 else "–"
    p = c.get("mcnemar_p")
    mcnemar = f"McNemar p = {p:.3g}" if isinstance(p, int | float) else "McNemar p unknown"
    n, split = results.get("n"), results.get("split", "test")
    on = f" on {n:,} {split} examples" if isinstance(n, int) else ""
    winner = c.get("winner")
    if isinstance(c.get("verdict"), str) and c["verdict"]:
        head = f"**Winner: {winner}.** " if winner else ""
        return f"{head}{c['verdict']}" + (f" Measured{on}." if on else "")
    if winner:
        loser = b if winner == a else a
        return (
            f"**{winner} is more accurate than {loser}**{on}: accuracy {a} − {b} = {points}, "
            f"paired 95% interval {span}, {mcnemar}."
        )
    return (
        f"**No clear winner**{on}: accuracy {a} − {b} = {points}, and its paired 95% interval {span} "
        f"contains 0 ({mcnemar})."
    )


def runs_table(runs: dict[str, dict[str, Any]]) -> str:
    """What each run was trained on and how it did on validation, as a Markdown table."""
    rows = [
        "| Model | Checkpoint | Task | Train / validation / test | Parameters | Training time | Epochs (best) "
        "| Validation accuracy | Validation macro F1 |",
        "|:---|:---|:---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, run in runs.items():
        data, training, validation = run["data"], run["training"], run["validation"]
        options = data.get("options") or {}
        task = options.get("task") or Path(str(options.get("train_file") or "?")).name
        splits = data.get("splits", {})
        sizes = " / ".join(number(splits.get(s)) for s in ("train", "validation", "test"))
        title = name if name == run["side"] else f"{name} ({run['side']})"
        rows.append(
            f"| **{title}** | {checkpoint(run['model'].get('name'))} | {task} | {sizes} | {number(run['model'].get('params'))} "
            f"| {number(training.get('seconds'), ' s')} | {training.get('epochs_run', '?')} "
            f"({training.get('best_epoch', '?')}) | {percent(validation.get('accuracy'))} | "
            f"{percent(validation.get('macro_f1'))} |"
        )
    return "\n".join(rows)


def checkpoint(name: Any) -> str:
    """A model name as recorded; a local checkpoint directory is shown by its folder name only."""
    text = str(name or "?")
    return Path(text).name if text.startswith(("/", "./", "../")) else text


def curve_summary(curve: dict[str, Any]) -> str:
    """The learning curve's mean test accuracy per side and training size, and where scratch catches up."""
    means: dict[tuple[str, int], list[float]] = {}
    for point in curve.get("points", []):
        means.setdefault((point["side"], point["size"]), []).append(point["accuracy"])
    sizes = sorted({size for _, size in means})
    sides = sorted({side for side, _ in means})
    rows = ["| Training examples | " + " | ".join(sides) + " |", "|---" * (len(sides) + 1) + "|"]
    for size in sizes:
        cells = [percent(float(np.mean(means[(s, size)]))) if (s, size) in means else "–" for s in sides]
        rows.append(f"| {size:,} | " + " | ".join(cells) + " |")
    catch_up = curve.get("catch_up_size")
    tail = (
        f"The from-scratch model catches up with the fine-tuned one at about **{catch_up:,}** training examples."
        if isinstance(catch_up, int)
        else "The from-scratch model does not catch up with the fine-tuned one within the sizes tried."
    )
    return "\n".join(rows) + "\n\n" + tail


def report_runs(report: Report | None, models: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """run.json of every run to describe: the report's runs by their report names, else the loaded ones."""
    runs = {}
    if report is not None:
        for name, path in (report.results.get("runs") or {}).items():
            located = locate_run(report.directory, name, str(path))
            try:
                runs[name] = read_run_json(located) if located is not None else None
            except (ValueError, OSError) as error:
                logger.warning("Cannot describe the run %s of the report: %s", name, error)
        runs = {name: run for name, run in runs.items() if run is not None}
    for side, model in models.items():
        if not any(run.get("side") == side for run in runs.values()):
            runs[model.name] = model.run
    return runs


FIGURE_TITLES = {
    "confusion_matrices": "Confusion matrices",
    "reliability": "Reliability diagrams (calibration)",
    "per_class_f1": "Per-class F1",
    "accuracy_vs_cost": "Accuracy against cost",
    "curve": "Learning curve",
}


def figure_title(path: Path) -> str:
    return FIGURE_TITLES.get(path.stem) or path.stem.replace("_", " ").replace("-", " ").capitalize()


# --- the page -------------------------------------------------------------------------------------------

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
"""


def header(models: dict[str, Any], report: Report | None, problems: list[str]) -> str:
    lines = ["# Fine-tuned BERT vs. a Transformer trained from scratch"]
    if models:
        run = next(iter(models.values())).run
        options = run["data"].get("options") or {}
        task = options.get("task") or Path(str(options.get("train_file") or "your data")).name
        lines.append(
            f"Type a text and see how each model classifies it. Task **{task}**, classes: "
            + ", ".join(f"`{label}`" for label in run["data"]["labels"])
            + "."
        )
    else:
        lines.append(
            f"**No trained models are loaded.** Create a report with `{CREATE_COMMAND}` (trains both models on "
            "SST-2 and writes `reports/sst2/`), then start this app again with `make app`, or point it at runs "
            "with `python app.py --runs DIR`."
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
) -> gr.Blocks:
    """The whole page over already loaded models; prediction callbacks close over `models`.

    Args:
        models: classifiers keyed by side (`finetune`, `scratch`); either or both may be missing.
        report: the report to show, or None.
        examples: test-split examples; default: the report's.
    """
    examples = report.examples if examples is None and report is not None else examples or []
    scratch = models.get("scratch")
    probe = explain(scratch, "attention", max_chars) if scratch is not None else None
    layers, heads = probe[1].shape[:2] if probe else (0, 0)

    def run_classify(text: str, model: str) -> tuple[dict[str, Any], dict[str, float]]:
        """Classifies `text` with `model` (finetune, scratch or both): {model: {label: probability}} or {"error"}."""
        return classify_timed(text, model, models, max_chars)

    def run_explain(text: str, choice: str, layer: int, head: int) -> tuple[Any, Any]:
        found = explain(scratch, text, max_chars) if choice in ("both", "scratch") else None
        return found, attention_figure(*found, layer, head) if found else None

    def redraw(found: Any, layer: int, head: int) -> Any:
        return attention_figure(*found, layer, head) if found else None

    with gr.Blocks(title="Text classification: fine-tuned vs. from scratch") as demo:
        gr.Markdown(header(models, report, problems or []))
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
                    gold = gr.Textbox(
                        label="Gold label (test split)",
                        interactive=False,
                        visible=any(e.gold is not None for e in examples),
                    )
                    choice = gr.Radio(
                        [
                            ("Both, side by side", "both"),
                            (TITLES["finetune"] + ("" if "finetune" in models else " (not loaded)"), "finetune"),
                            (TITLES["scratch"] + ("" if "scratch" in models else " (not loaded)"), "scratch"),
                        ],
                        value="both" if len(models) != 1 else next(iter(models)),
                        label="Model",
                        elem_id="choice",
                    )
                    button = gr.Button("Classify", variant="primary", elem_id="classify")
                with gr.Column(scale=7):
                    status = gr.Markdown(elem_id="status")
                    with gr.Row():
                        panels = [
                            gr.Label(
                                label=TITLES[side],
                                num_top_classes=8,
                                elem_id=f"label-{side}",
                                elem_classes="label-panel",
                            )
                            for side in SIDES
                        ]
                    latency = gr.Markdown(elem_id="latency")
                    with gr.Accordion("API response (JSON)", open=False):
                        answer = gr.JSON(label="classify", elem_id="answer")
            if examples:
                disagree = [e for e in examples if e.disagreement]
                agree = [e for e in examples if not e.disagreement]
                for rows, title in ((disagree, "Test texts the two models disagree on"), (agree, "More test texts")):
                    if rows:
                        gr.Examples(
                            [[e.text, "" if e.gold is None else str(e.gold)] for e in rows],
                            inputs=[text, gold],
                            label=title,
                        )
            if scratch is not None:
                with gr.Accordion("Where the from-scratch model looks (attention)", open=probe is not None):
                    if probe is None:
                        gr.Markdown("The from-scratch model did not return attention weights.")
                    with gr.Row():
                        layer = gr.Dropdown(
                            [(f"Layer {i + 1}", i) for i in range(layers)], value=max(layers - 1, 0), label="Layer"
                        )
                        head = gr.Dropdown(
                            [("Mean over heads", -1)] + [(f"Head {h + 1}", h) for h in range(heads)],
                            value=-1,
                            label="Head",
                        )
                    heatmap = gr.Plot(label="Attention", elem_id="attention")
                    found = gr.State(None)
            latencies = gr.State({})

        with gr.Tab("Report", elem_id="report"):
            _report_tab(report, models)

        event = gr.on(
            [button.click, text.submit], run_classify, [text, choice], [answer, latencies], api_name="classify"
        )
        event.then(render_results, [answer, latencies], [*panels, latency, status], api_visibility="private")
        if scratch is not None:
            event.then(run_explain, [text, choice, layer, head], [found, heatmap], api_visibility="private")
            for chooser in (layer, head):
                chooser.change(redraw, [found, layer, head], heatmap, api_visibility="private")
    return demo


def _report_tab(report: Report | None, models: dict[str, Any]) -> None:
    if report is None:
        gr.Markdown(
            f"No report to show. `{CREATE_COMMAND}` trains both models and writes one to `reports/<task>/`; "
            "`python app.py --report DIR` shows another."
        )
    else:
        results = report.results
        gr.Markdown(f"## Verdict\n\n{verdict(results)}", elem_id="verdict")
        gr.Markdown(f"## Headline ({results.get('split', 'test')} split)\n\n{headline_table(results)}")
    runs = report_runs(report, models)
    if runs:
        gr.Markdown(f"## The runs\n\n{runs_table(runs)}")
    if report is not None and report.curve:
        gr.Markdown(f"## Learning curve\n\n{curve_summary(report.curve)}")
    if report is not None and (report.directory / "report.html").is_file():
        gr.DownloadButton("Download the full report (HTML)", str(report.directory / "report.html"), size="sm")
    if report is not None and report.figures:
        gr.Markdown("## Figures")
        for start in range(0, len(report.figures), 2):
            with gr.Row():
                for path in report.figures[start : start + 2]:
                    with gr.Column():  # the caption sits above the figure, never over its own title
                        gr.Markdown(f"**{figure_title(path)}**")
                        gr.Image(str(path), show_label=False, interactive=False, format="png", height=360)


# --- the command ----------------------------------------------------------------------------------------


@dataclass
class Loaded:
    """Everything the page shows, read once at start."""

    models: dict[str, Any]
    report: Report | None
    examples: list[Example]
    problems: list[str]


def load_app(args: AppArguments) -> Loaded:
    """Reads the report and runs `args` name; a missing report or an unloadable run is reported, not fatal."""
    report_dir, run_dirs = resolve_sources(args)
    report = load_report(report_dir) if report_dir is not None else None
    models, problems = load_models(run_dirs)
    if not models and run_dirs:
        problems.append(f"None of the runs could be loaded; `{CREATE_COMMAND}` trains a fresh pair.")
    examples = report.examples if report is not None and report.examples else live_examples(models)
    return Loaded(models, report, examples, problems)


def create_demo(args: AppArguments) -> gr.Blocks:
    """Loads what `args` name (once) and builds the page."""
    loaded = load_app(args)
    return build_demo(
        loaded.models, loaded.report, max_chars=args.max_chars, examples=loaded.examples, problems=loaded.problems
    )


def serve(demo: gr.Blocks, args: AppArguments, block: bool = True) -> gr.Blocks:
    """Starts the server: a queue of `CONCURRENCY` workers, loopback by default, no share link unless asked."""
    demo.queue(default_concurrency_limit=CONCURRENCY)
    demo.launch(
        server_name=args.host,
        server_port=args.port,
        share=args.share,
        prevent_thread_lock=not block,
        theme=THEME,
        css=CSS,
        footer_links=["api"],
        quiet=not block,
    )
    return demo


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    (args,) = parse_args((AppArguments,), argv)
    try:
        demo = create_demo(args)
    except (OSError, ValueError) as error:
        raise SystemExit(f"app.py: {error}") from None
    serve(demo, args)


if __name__ == "__main__":
    main()
