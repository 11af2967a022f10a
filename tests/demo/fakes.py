"""Stand-ins and fixtures for the demo's tests: fake classifiers, small report directories, and reports
written by compare itself over the tiny runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from core.rundir import write_run_json

LABELS = ["negative", "positive"]
POSITIVE_WORDS = {"great", "wonderful", "loved", "superb", "joy"}
NEGATIVE_WORDS = {"dull", "boring", "hated", "terrible", "waste"}


def run_record(side: str, labels: list[str] = LABELS) -> dict[str, Any]:
    """A complete run.json body (write_run_json adds the rest)."""
    return {
        "side": side,
        "model": {"name": "tiny-" + side, "source": "test", "params": 12_345, "trainable_params": 12_345},
        "data": {
            "options": {"task": "sst2", "max_length": 16},
            "labels": labels,
            "splits": {"train": 200, "validation": 20, "test": 30},
            "fingerprints": {"train": "x"},
        },
        "hyperparameters": {},
        "training": {"seconds": 12.5, "epochs_run": 3, "best_epoch": 2, "history": [], "examples_per_second": 40.0},
        "validation": {"accuracy": 0.85, "macro_f1": 0.8412},
    }


class FakeClassifier:
    """A bag-of-words stand-in with the Classifier interface: positive words push towards `positive`."""

    def __init__(self, side: str, labels: list[str] = LABELS) -> None:
        self.side = self.name = side
        self.labels = list(labels)
        self.run = run_record(side, self.labels)

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        words = [text.lower().split() for text in texts]
        score = np.array([sum((w in POSITIVE_WORDS) - (w in NEGATIVE_WORDS) for w in ws) for ws in words], float)
        logits = np.zeros((len(texts), len(self.labels)))
        logits[:, -1] = score + (0.3 if self.side == "scratch" else 0.0)
        exp = np.exp(logits - logits.max(axis=1, keepdims=True))
        return exp / exp.sum(axis=1, keepdims=True)


class FakeScratch(FakeClassifier):
    """Adds `explain`: tokens padded to 8 with `[PAD]`, attention rows that sum to 1."""

    layers, heads = 2, 3

    def __init__(self) -> None:
        super().__init__("scratch")

    def explain(self, text: str) -> tuple[list[str], np.ndarray]:
        tokens = (text.lower().split()[:8] + ["[PAD]"] * 8)[:8]
        rng = np.random.default_rng(len(text))
        weights = rng.random((self.layers, self.heads, 8, 8))
        return tokens, weights / weights.sum(axis=-1, keepdims=True)


def compare_report(tiny_runs: dict[str, Path], output: Path) -> Path:
    """The report `python -m compare report` writes over the two tiny runs, into `output`."""
    from compare.report.command import main as report_main

    argv = ["--runs", str(tiny_runs["finetune"]), str(tiny_runs["scratch"]), "--output-dir", str(output)]
    assert report_main([*argv, "--latency-samples", "2", "--bootstrap-resamples", "200"]) == 0
    return output


def write_report(directory: Path, runs: dict[str, Path] | None = None) -> Path:
    """A small report directory for finding runs and examples (its results.json holds only `runs`; the report
    tab's numbers are tested on reports compare writes), with run.json files under runs/."""
    directory.mkdir(parents=True, exist_ok=True)
    if runs is None:
        runs = {}
        for side in ("finetune", "scratch"):
            (directory / "runs" / side).mkdir(parents=True)
            write_run_json(directory / "runs" / side, run_record(side))
            runs[side] = directory / "runs" / side
    results = {"schema_version": 1, "runs": {name: str(path) for name, path in runs.items()}}
    (directory / "results.json").write_text(json.dumps(results))
    rows = [
        ("a great film", "positive", "positive", "negative"),
        ("a dull mess", "negative", "negative", "negative"),
        ("x" * 400, "positive", "positive", "negative"),  # too long to offer as an example
        ("i hated it", "negative", "positive", "negative"),
        ("superb acting", "positive", "positive", "positive"),
        ("boring and far too long", "negative", "positive", "negative"),
    ]
    with (directory / "predictions.jsonl").open("w") as handle:
        for text, gold, ft, sc in rows:
            predictions = {"finetune": {"label": ft, "probs": {}}, "scratch": {"label": sc, "probs": {}}}
            handle.write(json.dumps({"text": text, "gold": gold, "predictions": predictions}) + "\n")
        handle.write("not json\n")
    (directory / "report.html").write_text("<html><body><h1>Report</h1></body></html>")
    from matplotlib.figure import Figure

    figure = Figure(figsize=(3, 2))
    figure.subplots().bar(["finetune", "scratch"], [0.873, 0.791])
    figure.savefig(directory / "accuracy_by_model.png")
    return directory
