"""Assembling `results.json` and `predictions.jsonl` (formats fixed in docs/formats.md) from scored predictions.

Each model's `outputs` (probabilities, or values for regression) and `decisions` (class ids, 0/1 label rows by its
thresholds, or the values) are by model name.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from compare.kinds import reported
from compare.report.pairs import pair_sections
from compare.report.runs import EvalSplit, Model, input_columns
from compare.scoring.statistics import StatisticsArguments, paired_comparison, spread, verdict
from core.kinds import Kind

SCHEMA_VERSION = 1


def comparison(
    models: list[Model], decisions: dict[str, np.ndarray], seed_scores: dict, split: EvalSplit, stats
) -> dict:
    """The `comparison` section: the first model against the second, with the verdict on the headline."""
    a, b, headline = models[0].name, models[1].name, split.headline
    result = {
        "a": a,
        "b": b,
        **paired_comparison(split.gold, decisions[a], decisions[b], len(split.labels), stats, split.kind),
    }
    seed_diffs = None
    if len(models[0].runs) > 1:
        seed_diffs = [x - y for x, y in zip(seed_scores[a][headline], seed_scores[b][headline])]
        result[f"seed_{headline}_diffs"] = seed_diffs
    result["winner"], result["verdict"] = verdict(a, b, result, seed_diffs, headline)
    return result


def seeds_section(models: list[Model], seed_scores: dict, kind: Kind) -> dict:
    """Per model: the seeds, their runs and the kind's two scores, with their mean and standard deviation across
    seeds."""
    section = {}
    for model in models:
        scores = seed_scores[model.name]
        entry = {"seeds": [r.seed for r in model.runs], "runs": [str(r.path) for r in model.runs]}
        for metric in kind.scores:
            entry[metric] = scores[metric]
            summary = spread(scores[metric])
            entry[f"{metric}_mean"], entry[f"{metric}_std"] = summary["mean"], summary["std"]
        section[model.name] = entry
    return section


def build_results(
    split: EvalSplit,
    models: list[Model],
    entries: dict[str, dict],
    decisions: dict[str, np.ndarray],
    seed_scores: dict[str, dict[str, list[float]]],
    baselines: dict,
    stats: StatisticsArguments,
    settings: dict,
    notes: list[str],
    environment: dict,
) -> dict:
    """results.json: split, kind of task, runs, settings, per-model scores and costs, baselines, comparison (and with
    more than two models `comparisons` and `gap_closed`), seeds."""
    return {
        "schema_version": SCHEMA_VERSION,
        "split": split.name,
        "n": len(split.gold),
        "problem_type": split.kind.name,
        "headline_metric": split.headline,
        "labels": split.labels,
        "columns": input_columns(models[0].primary.record),
        "runs": {m.name: str(m.primary.path) for m in models},
        "settings": {**stats.settings(), **settings},
        "data": {"source": split.source, "baseline_train_rows": len(split.train_gold), "notes": notes},
        "models": entries,
        "baselines": baselines,
        "comparison": comparison(models, decisions, seed_scores, split, stats),
        **pair_sections(models, decisions, split, stats),
        "seeds": seeds_section(models, seed_scores, split.kind),
        "environment": environment,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    }


def prediction_rows(
    split: EvalSplit,
    outputs: dict[str, np.ndarray],
    decisions: dict[str, np.ndarray],
    label_quality: np.ndarray | None = None,
) -> Iterable[dict]:
    """predictions.jsonl rows: text (and second text), gold, each model's answer (`predictions`), labels by name, and
    where the labels were audited the gold label's `label_quality` (`compare.scoring.label_issues`)."""
    labels, kind = split.labels, split.kind
    for i, text in enumerate(split.texts):
        row = {"text": text, **({"text_pair": split.pairs[i]} if split.pairs is not None else {})}
        row["gold"] = kind.answer(labels, split.gold[i])
        row["predictions"] = {
            name: reported(kind).prediction(labels, outputs[name][i], decisions[name][i]) for name in outputs
        }
        if label_quality is not None:
            row["label_quality"] = round(float(label_quality[i]), 6)
        yield row


def write_predictions(path: Path, rows: Iterable[dict]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def read_predictions(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
