"""What qualifies a comparison, added to results.json before the report is drawn: each model's diagnosis, the
clause the verdict sentence carries, and the validation curves against training time.

The findings and their rules are `compare.diagnosis`'s; this module only feeds them the report's runs, its
scores and, with several seeds, the per-seed test scores the report already computed, all in the task's headline
score (results.json `headline_metric`).
"""

from __future__ import annotations

from pathlib import Path

from compare.diagnosis import diagnose_report, equal_time_sentence, training_curves, verdict_clause
from compare.diagnosis.pretraining import pretraining_section
from compare.diagnosis.verdict import settle
from compare.report.runs import Model


def qualify(
    results: dict, models: list[Model], seed_scores: dict[str, dict[str, list[float]]], output_dir: Path = Path(".")
) -> None:
    """Adds `models.<name>.diagnosis`, `training_curves` and, with self-pretrained models, `pretraining`, and the findings' clause to the verdict, in place; calls
    the comparison and every pair of `comparisons` unsettled when a model had not finished learning
    (`compare.diagnosis.verdict.settle`), with the command that settles it, written to `output_dir` again."""
    runs = {model.name: model.primary.record for model in models}
    headline = results["headline_metric"]
    per_seed = {name: scores[headline] for name, scores in seed_scores.items()}
    several = min(len(model.runs) for model in models) > 1
    found = diagnose_report(runs, results, per_seed if several else None, output_dir)
    for name, findings in found.items():
        results["models"][name]["diagnosis"] = findings
    comparison = results["comparison"]
    pair = (comparison["a"], comparison["b"])
    clause = verdict_clause({name: found.get(name, []) for name in pair})
    if clause:
        comparison["verdict"] = comparison["verdict"].removesuffix(".") + clause + "."
    settle(comparison, found, runs, output_dir)
    for each in results.get("comparisons", []):  # with more models, every pair is held to the same rule
        settle(each, found, runs, output_dir)
    pretraining = pretraining_section(runs)
    if pretraining:
        results["pretraining"] = pretraining
    metric = f"val_{headline}"
    curves = training_curves(runs, metric)
    results["training_curves"] = {
        "metric": metric,
        "curves": curves,
        "equal_time": equal_time_sentence({name: curves[name] for name in pair}, metric),
    }
