"""`bench.md`: the benchmark's tables, and which targets are met, for people."""

from __future__ import annotations

from compare.render.markdown import markdown_table
from compare.render.tables import Table


def _ms(value: float) -> str:
    return f"{value:.1f}" if value < 100 else f"{value:.0f}"


def _number(value: float) -> str:
    if isinstance(value, int) or abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def training_table(bench: dict) -> Table:
    rows = []
    for side in bench["tokenize"]:  # the sides whose training was timed
        e = bench[side]
        rows.append(
            [
                side,
                f"{e['examples_per_s']:.1f}",
                f"{e['pad128_examples_per_s']:.1f}",
                f"{e['speedup_vs_pad128']:.2f}x",
                f"{e['useful_flops_utilisation']:.3f}",
                f"{e['pad128_useful_flops_utilisation']:.3f}",
                f"{e['real_token_share'] * 100:.0f}% / {e['pad128_real_token_share'] * 100:.0f}%",
                f"{e['peak_rss_mb']:,.0f}",
            ]
        )
    timed = list(bench["tokenize"])
    batches = " and ".join(f"{bench[side]['batch_size']} ({side})" for side in timed)
    note = (
        f"Training steps (forward, backward, AdamW update) at batch {batches} on the same texts, the real pipeline's "
        f"length-grouped batches against the same batches padded to {bench[timed[0]]['max_length']} tokens, timed "
        "in alternating rounds "
        "after warm-up. Utilisation: matmul FLOPs spent on real tokens per second over the fp32 matmul rate "
        f"measured between the rounds ({bench['matmul_gflops']:.0f} GFLOP/s on average)."
    )
    header = [
        "side",
        "examples/s",
        "128-padded examples/s",
        "speed-up",
        "useful-FLOPs utilisation",
        "128-padded utilisation",
        "real tokens (own / 128)",
        "peak MB",
    ]
    return Table("Training throughput", header, rows, note=note)


def prediction_table(bench: dict) -> Table:
    rows = [
        [
            side,
            f"{bench['tokenize'][side]:,.0f}",
            _ms(bench["predict"][side]["p50_ms"]),
            _ms(bench["predict"][side]["p95_ms"]),
            f"{bench['predict'][side]['batch_per_s']:,.0f}",
            f"{bench['predict'][side]['peak_rss_mb']:,.0f}",
        ]
        for side in bench["predict"]
    ]
    header = ["side", "tokenizer texts/s (train split)", "single-text p50 ms", "p95 ms", "batched texts/s", "peak MB"]
    return Table("Tokenisation and prediction", header, rows, note="Prediction through each run's Classifier.")


def serving_table(bench: dict) -> Table:
    """Each side's serving paths: the Classifier, the exported float SavedModel and the int8 TFLite and ONNX models."""
    names = {
        "current": "core.classifier.load",
        "float": "export, float SavedModel",
        "int8": "export, int8 TFLite",
        "onnx_int8": "export, int8 ONNX",
    }
    rows = []
    for side, entry in bench["serving"].items():
        for path in names:
            timed = entry.get(path)
            if not timed:
                continue
            ratio = "1.00x" if path == "current" else f"{entry[f'{path}_vs_current_p50']:.2f}x"
            accuracy = entry.get(f"{path}_accuracy")
            runtime = f" ({entry['runtime']})" if path == "current" and entry.get("runtime") else ""
            rows.append(
                [
                    side,
                    names[path] + runtime,
                    _ms(timed["p50_ms"]),
                    _ms(timed["p95_ms"]),
                    ratio,
                    f"{timed['batch_per_s']:,.0f}",
                    "–" if accuracy is None else f"{accuracy:.4f}",
                ]
            )
    changes = [
        f"{side} {names[p]} {entry[f'{p}_accuracy_change'] * 100:+.2f} points "
        f"({entry[f'{p}_agreement'] * 100:.1f}% same labels)"
        for side, entry in bench["serving"].items()
        for p in ("int8", "onnx_int8")
        if entry.get(f"{p}_accuracy_change") is not None
    ]
    note = (
        "Single-text calls, the paths taking turns in the same process (each turn after one untimed call); "
        "p50 ratio against the Classifier. "
        "Accuracy on the test split, from export.json."
        + (f" int8 against float: {'; '.join(changes)}." if changes else "")
    )
    header = ["side", "path", "single-text p50 ms", "p95 ms", "p50 vs Classifier", "batched texts/s", "test accuracy"]
    return Table("Serving exports", header, rows, note=note)


def app_table(bench: dict) -> Table:
    a = bench["app"]
    peak = "–" if a.get("peak_rss_mb") is None else f"{a['peak_rss_mb']:,.0f}"
    rows = [[f"{a['requests']}", f"{a['clients']}", f"{a['errors']}", _ms(a["p50_ms"]), _ms(a["p95_ms"]), peak]]
    return Table(
        "The app under load",
        ["requests", "concurrent clients", "errors", "p50 ms", "p95 ms", "peak MB"],
        rows,
        note="`classify` with both models, each client its own gradio_client against app.py on 127.0.0.1.",
    )


def targets_table(bench: dict) -> Table:
    rows = []
    for t in bench["targets"]:
        value = t["value"]
        shown = "–" if value is None else _number(value)
        mark = "–" if t["met"] is None else ("✓ met" if t["met"] else "✗ not met")
        rows.append([t["target"], f"{t['op']} {t['threshold']:g}", shown, mark])
    return Table("Targets", ["target", "wanted", "measured", ""], rows)


def render_markdown(bench: dict) -> str:
    missed = [t["target"] for t in bench["targets"] if t["met"] is False]
    measured = [t for t in bench["targets"] if t["met"] is not None]
    summary = (
        "Every measured target is met."
        if not missed
        else f"{len(missed)} of {len(measured)} targets are not met: {'; '.join(missed)}."
    )
    env = bench["environment"]
    parts = [
        "# Benchmark\n",
        f"**{summary}**\n",
        f"Profile `{bench['profile']}`; runs: "
        + ", ".join(f"{side} `{path}`" for side, path in bench["runs"].items())
        + f". Machine: {env.get('cpu_count')} CPUs, {env.get('platform')}, TensorFlow {env.get('tensorflow')}.\n",
        markdown_table(targets_table(bench)),
        markdown_table(training_table(bench)),
        markdown_table(prediction_table(bench)),
        *([markdown_table(serving_table(bench))] if bench.get("serving") else []),
        markdown_table(app_table(bench)),
    ]
    return "\n".join(parts)
