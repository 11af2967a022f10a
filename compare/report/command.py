"""`python -m compare report --runs RUN RUN [...] --output-dir DIR`: score runs on one split and write the report.

Reads the runs only through `run.json` and `core.classifier.load`, scores every model on the same labelled
split, compares the first two, and writes `report.md`, a self-contained `report.html`, `results.json`,
`predictions.jsonl` and the figures into DIR, which appears only when all of it succeeded. Translation runs
get the translation report instead (`compare.translation.report`).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from compare.diagnosis import training_curves_png
from compare.diagnosis.training_curves_figure import FILENAME as TRAINING_CURVES
from compare.progress import Progress, setup_logging
from compare.render.figures import all_figures
from compare.render.html import render_html
from compare.render.markdown import render_markdown
from compare.render.tuning import FIGURE as TUNING_FIGURE
from compare.render.tuning import tuning_figure
from compare.report.publish import ReportDirError, check_output_dir, report_directory
from compare.report.qualify import qualify
from compare.report.results import build_results, prediction_rows, write_predictions
from compare.report.runs import EvalSplit, Model, check_compatible, group_models, leakage_notes, load_split, read_runs
from compare.scoring import baselines as baseline_models
from compare.scoring.costs import run_costs
from compare.scoring.error_analysis import confident_mistakes, count_disagreements, disagreements
from compare.scoring.scores import quick_scores, score
from compare.scoring.statistics import StatisticsArguments
from compare.scoring.timing import predict_split, single_text_latency
from compare.translation.report import TranslationReportArguments, build_translation_report
from core import sides
from core.args import parse_args
from core.classifier import Classifier, load
from core.data import DataError
from core.rundir import RunError, environment, write_json
from core.translator import is_translation_run

logger = logging.getLogger(__name__)

Loader = Callable[[Path, str], Classifier]


@dataclass
class ReportArguments:
    """Which runs to compare, on which split, and where the report goes."""

    runs: list[str] = field(metadata={"help": "Run directories; runs with the same name are seeds of one model."})
    output_dir: str = field(metadata={"help": "The report directory to write."})
    split: str = field(default="test", metadata={"help": "The labelled split to score: test or validation."})
    names: list[str] | None = field(
        default=None, metadata={"help": "A name per run (default: its side); equal names group seeds of one model."}
    )
    latency_samples: int = field(default=50, metadata={"help": "Single-text predictions timed per model."})
    examples: int = field(default=25, metadata={"help": "Rows in each error-analysis table."})

    def __post_init__(self) -> None:
        for name in ("latency_samples", "examples"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(self, name)}.")


def main(argv: list[str] | None = None) -> int:
    args, stats = parse_args((ReportArguments, StatisticsArguments), argv)
    setup_logging()
    try:
        if any(is_translation_run(run) for run in args.runs):
            options = TranslationReportArguments(latency_samples=args.latency_samples, examples=args.examples)
            build_translation_report(args.runs, args.output_dir, stats, options, args.names, args.split)
            return 0
        if len(args.runs) < 2:
            raise RunError(f"--runs needs at least two classification run directories, got {len(args.runs)}.")
        build_report(args, stats)
    except (RunError, DataError, ReportDirError) as error:
        logger.error("compare report: %s", error)
        return 1
    return 0


def build_report(
    args: ReportArguments,
    stats: StatisticsArguments,
    progress: Progress | None = None,
    loader: Loader = load,
    draw: Callable[[dict, dict, list[str]], dict[str, bytes]] = all_figures,
    tuning: dict | None = None,
) -> dict:
    """Scores the runs of `args` and writes the report directory; returns results.json's content.

    `loader` turns a run directory into a Classifier and `draw` makes the figures; tests replace them.
    `tuning` is results.json `tuning` when `compare run --tune` chose the runs.
    """
    progress = progress or Progress()
    check_output_dir(Path(args.output_dir))
    runs = read_runs(args.runs, args.names)
    models = group_models(runs)
    notes = check_compatible(runs, args.split)
    progress.stage("read %d run(s): %s", len(runs), ", ".join(f"{m.name} x{len(m.runs)}" for m in models))
    split = load_split(runs, args.split)
    notes += leakage_notes(split.name, split.texts, split.train_texts, "texts")
    progress.stage("loaded the %s split: %d examples from %s", split.name, len(split.gold), split.source)
    entries, probs, seed_scores = score_models(models, split, args, stats, progress, loader)
    baselines = score_baselines(split)
    progress.stage(
        "baselines: majority %.3f, TF-IDF + logistic regression %.3f (trained on %d rows)",
        baselines["majority"]["accuracy"],
        baselines["tfidf_logreg"]["accuracy"],
        len(split.train_gold),
    )
    settings = {"latency_samples": args.latency_samples, "error_examples": args.examples}
    results = build_results(
        split, models, entries, probs, seed_scores, baselines, stats, settings, notes, environment()
    )
    if tuning:
        results["tuning"] = tuning
    qualify(results, models, seed_scores)
    analysis = error_analysis(split, probs, args.examples)
    results["comparison"]["disagreements"] = analysis["disagreement_count"]
    figures = draw(results["models"], baselines, split.labels)
    curves = results["training_curves"]["curves"]
    if any(curves.values()):
        figures[TRAINING_CURVES] = training_curves_png(curves)
    if tuning:
        figures[TUNING_FIGURE] = tuning_figure(tuning)
    progress.stage("drew %d figures. Verdict: %s", len(figures), results["comparison"]["verdict"])
    write_report(Path(args.output_dir), results, analysis, figures, split, probs)
    progress.stage("report written: %s", Path(args.output_dir) / "report.html")
    return results


def score_models(
    models: list[Model],
    split: EvalSplit,
    args: ReportArguments,
    stats: StatisticsArguments,
    progress: Progress,
    loader: Loader = load,
) -> tuple[dict, dict, dict]:
    """Predicts the split with every run; full scores and speed for each model's primary run.

    Returns:
        (results.json `models` entries, primary probabilities by name, per-seed accuracy/macro-F1 lists).
    """
    entries, probs, seed_scores = {}, {}, {}
    for model in models:
        seed_scores[model.name] = {"accuracy": [], "macro_f1": []}
        for run in model.runs:
            classifier = loader(run.path, model.name)
            if list(classifier.labels) != split.labels:
                raise RunError(f"{run.path} predicts labels {classifier.labels}, but its run.json says {split.labels}.")
            run_probs, throughput = predict_split(classifier, split.texts)
            scores = quick_scores(run_probs.argmax(axis=1), split.gold, len(split.labels))
            for metric, value in scores.items():
                seed_scores[model.name][metric].append(value)
            if run is model.primary:
                probs[model.name] = run_probs
                speed = single_text_latency(classifier, split.texts, args.latency_samples)
                entries[model.name] = {
                    **score(run_probs, split.gold, split.labels, stats),
                    **run_costs(run.run, run.path),
                    **speed,
                    "throughput_per_s": throughput,
                    "seed": run.seed,
                    "title": sides.run_title(run.run),
                }
            progress.stage(
                "scored %s (seed %s): accuracy %.4f, macro-F1 %.4f, %.0f texts/s",
                model.name,
                run.seed,
                scores["accuracy"],
                scores["macro_f1"],
                throughput,
            )
            del classifier
    return entries, probs, seed_scores


def score_baselines(split: EvalSplit) -> dict:
    k = len(split.labels)
    return {
        "majority": baseline_models.majority_class(split.train_gold, split.gold, k),
        "tfidf_logreg": baseline_models.tfidf_logreg(split.train_texts, split.train_gold, split.texts, split.gold, k),
    }


def error_analysis(split: EvalSplit, probs: dict[str, np.ndarray], limit: int) -> dict:
    return {
        "disagreement_count": count_disagreements(probs),
        "disagreements": disagreements(split.texts, split.gold, probs, split.labels, limit),
        "confident_mistakes": {
            name: confident_mistakes(split.texts, split.gold, probs, name, split.labels, min(limit, 10))
            for name in probs
        },
    }


def write_report(
    output_dir: Path, results: dict, analysis: dict, figures: dict[str, bytes], split: EvalSplit, probs: dict
) -> None:
    with report_directory(output_dir) as tmp:
        for name, png in figures.items():
            (tmp / name).write_bytes(png)
        write_predictions(tmp / "predictions.jsonl", prediction_rows(split, probs))
        (tmp / "report.md").write_text(render_markdown(results, analysis, list(figures)), encoding="utf-8")
        (tmp / "report.html").write_text(render_html(results, analysis, figures), encoding="utf-8")
        write_json(tmp / "results.json", results)


if __name__ == "__main__":
    sys.exit(main())
