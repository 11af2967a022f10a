"""Assembling `results.json` and `predictions.jsonl` (formats fixed in docs/formats.md) from scored predictions."""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from compare.report.pairs import pair_sections
from compare.report.runs import EvalSplit, Model
from compare.scoring.statistics import StatisticsArguments, paired_comparison, spread, verdict

SCHEMA_VERSION = 1


def comparison(models: list[Model], probs: dict[str, np.ndarray], seed_scores: dict, split: EvalSplit, stats) -> dict:
    """The `comparison` section: the first model against the second, with the verdict."""
    a, b = models[0].name, models[1].name
    result = {
        "a": a,
        "b": b,
        **paired_comparison(split.gold, probs[a].argmax(axis=1), probs[b].argmax(axis=1), len(split.labels), stats),
    }
    seed_diffs = None
    if len(models[0].runs) > 1:
        seed_diffs = [x - y for x, y in zip(seed_scores[a]["accuracy"], seed_scores[b]["accuracy"])]
        result["seed_accuracy_diffs"] = seed_diffs
    result["winner"], result["verdict"] = verdict(a, b, result, seed_diffs)
    return result


def seeds_section(models: list[Model], seed_scores: dict) -> dict:
    """Per model: the seeds, their runs and scores, and mean and standard deviation across seeds."""
    section = {}
    for model in models:
        scores = seed_scores[model.name]
        entry = {"seeds": [r.seed for r in model.runs], "runs": [str(r.path) for r in model.runs]}
        for metric in ("accuracy", "macro_f1"):
            entry[metric] = scores[metric]
            summary = spread(scores[metric])
            entry[f"{metric}_mean"], entry[f"{metric}_std"] = summary["mean"], summary["std"]
        section[model.name] = entry
    return section


def build_results(
    split: EvalSplit,
    models: list[Model],
    entries: dict[str, dict],
    probs: dict[str, np.ndarray],
    seed_scores: dict[str, dict[str, list[float]]],
    baselines: dict,
    stats: StatisticsArguments,
    settings: dict,
    notes: list[str],
    environment: dict,
) -> dict:
    """results.json: split, runs, settings, per-model scores and costs, baselines, comparison (and with more than
    two models `comparisons` and `gap_closed`), seeds."""
    return {
        "schema_version": SCHEMA_VERSION,
        "split": split.name,
        "n": len(split.gold),
        "labels": split.labels,
        "runs": {m.name: str(m.primary.path) for m in models},
        "settings": {**stats.settings(), **settings},
        "data": {"source": split.source, "baseline_train_rows": len(split.train_gold), "notes": notes},
        "models": entries,
        "baselines": baselines,
        "comparison": comparison(models, probs, seed_scores, split, stats),
        **pair_sections(models, probs, split, stats),
        "seeds": seeds_section(models, seed_scores),
        "environment": environment,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    }


def prediction_rows(split: EvalSplit, probs: dict[str, np.ndarray]) -> Iterable[dict]:
    """predictions.jsonl rows: text, gold label, and each model's label and probabilities, labels by name."""
    labels = split.labels
    for i, text in enumerate(split.texts):
        row_predictions = {name: (labels, p[i]) for name, p in probs.items()}
        yield {"text": text, "gold": labels[split.gold[i]], "predictions": predictions(row_predictions)}


def predictions(row: dict[str, tuple[list[str], np.ndarray]]) -> dict[str, dict]:
    """One row's `predictions` object: {model: {"label": its label, "probs": {label: probability}}}, from
    {model: (label names, probabilities)}; predictions.jsonl's and `compare predict`'s JSONL rows share it."""
    return {
        name: {
            "label": labels[int(p.argmax())],
            "probs": {label: round(float(v), 6) for label, v in zip(labels, p)},
        }
        for name, (labels, p) in row.items()
    }


def write_predictions(path: Path, rows: Iterable[dict]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def read_predictions(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
