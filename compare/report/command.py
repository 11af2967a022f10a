"""`python -m compare report --runs RUN RUN [...] --output-dir DIR`: score runs on one split and write the report.

Reads the runs only through `run.json` and `core.classifier.load`, scores every model on the same labelled
split with the scores of its kind of task (single label, multi-label or regression; `core.kinds`),
compares the first two, and writes `report.md`, a self-contained `report.html`, `results.json`,
`predictions.jsonl` and the figures into DIR, which appears only when all of it succeeded. Translation runs
get the translation report instead (`compare.translation.report`).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from compare.diagnosis import training_curves_png
from compare.diagnosis.training_curves_figure import FILENAME as TRAINING_CURVES
from compare.kinds import reported
from compare.progress import Progress
from compare.render.figures import all_figures, pretraining_curves
from compare.render.html import render_html
from compare.render.markdown import render_markdown
from compare.render.trust import trust_figures
from compare.render.tuning import FIGURE as TUNING_FIGURE
from compare.render.tuning import tuning_figure
from compare.report.arguments import ReportArguments
from compare.report.long_texts import long_text_entry, long_text_notes
from compare.report.publish import check_output_dir, report_directory
from compare.report.qualify import qualify
from compare.report.results import build_results, prediction_rows, write_predictions
from compare.report.runs import EvalSplit, Model, check_compatible, group_models, leakage_notes, load_split, read_runs
from compare.report.trust import assess
from compare.scoring import wording
from compare.scoring.costs import run_costs
from compare.scoring.error_analysis import confident_mistakes, count_disagreements, disagreements
from compare.scoring.faithfulness import add_faithfulness
from compare.scoring.scores import decide
from compare.scoring.statistics import StatisticsArguments
from compare.scoring.timing import predict_split, single_text_latency
from compare.translation.arguments import TranslationReportArguments
from compare.translation.report import build_translation_report
from core import sides
from core.classifier import Classifier, load
from core.rundir import RunError, environment, write_json
from core.translator import is_translation_run

logger = logging.getLogger(__name__)

Loader = Callable[[Path, str], Classifier]


def main(argv: list[str] | None = None) -> int:
    """`python -m compare report ...` (`compare.commands`)."""
    from compare.commands import REPORT

    return REPORT.main(argv)


def report(args: ReportArguments, stats: StatisticsArguments) -> None:
    """`compare report`'s work: the classification report, or the translation report when the runs translate."""
    if any(is_translation_run(run) for run in args.runs):
        options = TranslationReportArguments(latency_samples=args.latency_samples, examples=args.examples)
        build_translation_report(args.runs, args.output_dir, stats, options, args.names, args.split)
        return
    if len(args.runs) < 2:
        raise RunError(f"--runs needs at least two classification run directories, got {len(args.runs)}.")
    build_report(args, stats)


def build_report(
    args: ReportArguments,
    stats: StatisticsArguments,
    progress: Progress | None = None,
    loader: Loader = load,
    draw: Callable[[dict, dict[str, np.ndarray], np.ndarray], dict[str, bytes]] = all_figures,
    tuning: dict | None = None,
    train_audit: dict | None = None,
) -> dict:
    """Scores the runs of `args` and writes the report directory; returns results.json's content.

    `loader` turns a run directory into a Classifier and `draw` makes the figures from results.json, the models'
    outputs and the gold answers; tests replace them. `tuning` is results.json `tuning` when `compare run --tune`
    chose the runs; `train_audit` the train split's cross-validated probabilities when `compare run --audit-train`
    made them (`compare.report.trust`).
    """
    progress = progress or Progress()
    check_output_dir(Path(args.output_dir))
    runs = read_runs(args.runs, args.names)
    models = group_models(runs)
    notes = check_compatible(runs, args.split)
    progress.stage("read %d run(s): %s", len(runs), ", ".join(f"{m.name} x{len(m.runs)}" for m in models))
    split = load_split(runs, args.split)
    unit = "text pairs" if split.pairs is not None else "texts"
    notes += leakage_notes(split.name, split.task.inputs(split.name), split.task.inputs("train"), unit)
    progress.stage("loaded the %s split: %d examples from %s", split.name, len(split.gold), split.source)
    entries, outputs, decisions, seed_scores, long_texts = score_models(models, split, args, stats, progress, loader)
    notes += long_text_notes(long_texts)
    trust = assess(models, split, outputs, decisions, entries, stats, loader, train_audit)  # calibration, label audit
    baselines = score_baselines(split)
    progress.stage(
        "reference rows (trained on %d rows), %s: %s",
        len(split.train_gold),
        wording.name(split.headline),
        ", ".join(f"{wording.REFERENCE_NAMES[key]} {row[split.headline]:.3f}" for key, row in baselines.items()),
    )
    settings = {"latency_samples": args.latency_samples, "error_examples": args.examples}
    results = build_results(
        split, models, entries, decisions, seed_scores, baselines, stats, settings, notes, environment()
    )
    if long_texts:
        results["data"]["long_texts"] = long_texts
    if tuning:
        results["tuning"] = tuning
    results.update(trust.sections)
    qualify(results, models, seed_scores, Path(args.output_dir))
    add_faithfulness(results, models, split, args.faithfulness, loader, progress)
    analysis = error_analysis(split, outputs, decisions, args.examples)
    results["comparison"]["disagreements"] = analysis["disagreement_count"]
    figures = draw(results, outputs, split.gold)
    figures.update(trust_figures(results))
    curves = results["training_curves"]["curves"]
    if any(curves.values()):
        figures[TRAINING_CURVES] = training_curves_png(curves, results["training_curves"]["metric"])
    if results.get("pretraining"):
        figures["pretraining.png"] = pretraining_curves(results["pretraining"])
    if tuning:
        figures[TUNING_FIGURE] = tuning_figure(tuning, split.headline)
    progress.stage("drew %d figures. Verdict: %s", len(figures), results["comparison"]["verdict"])
    write_report(
        Path(args.output_dir), results, analysis, figures, prediction_rows(split, outputs, decisions, trust.quality)
    )
    progress.stage("report written: %s", Path(args.output_dir) / "report.html")
    return results


def score_models(
    models: list[Model],
    split: EvalSplit,
    args: ReportArguments,
    stats: StatisticsArguments,
    progress: Progress,
    loader: Loader = load,
) -> tuple[dict, dict, dict, dict, dict]:
    """Predicts the split with every run; full scores and speed for each model's primary run.

    Returns:
        (results.json `models` entries, the primary runs' outputs and decisions by name, per-seed lists of the
        kind's two scores, and `data.long_texts`: what each primary run cut of long texts).
    """
    entries, outputs, decisions, seed_scores, long_texts = {}, {}, {}, {}, {}
    kind = split.kind
    scoring = reported(kind)
    for model in models:
        seed_scores[model.name] = {metric: [] for metric in kind.scores}
        for run in model.runs:
            classifier = loader(run.path, model.name)
            if list(classifier.labels) != split.labels:
                raise RunError(f"{run.path} predicts labels {classifier.labels}, but its run.json says {split.labels}.")
            run_outputs, throughput = predict_split(classifier, split.texts, split.pairs)
            run_decisions = decide(classifier, run_outputs)
            scores = scoring.quick_scores(run_decisions, split.gold, len(split.labels))
            for metric, value in scores.items():
                seed_scores[model.name][metric].append(value)
            if run is model.primary:
                outputs[model.name], decisions[model.name] = run_outputs, run_decisions
                speed = single_text_latency(classifier, split.texts, args.latency_samples, split.pairs)
                entries[model.name] = {
                    **scoring.report_scores(run_outputs, run_decisions, split.gold, split.labels, stats),
                    **(
                        {"thresholds": [float(t) for t in run.record.thresholds]}
                        if scoring.decides_by_thresholds
                        else {}
                    ),
                    **run_costs(run.record, run.path),
                    **speed,
                    "throughput_per_s": throughput,
                    "seed": run.seed,
                    "title": sides.run_title(run.record),
                }
                texts = {"train": split.task.texts("train"), split.name: split.texts}
                if (entry := long_text_entry(classifier, texts, split.name)) is not None:
                    long_texts[model.name] = entry
            progress.stage(
                "scored %s (seed %s): %s, %.0f inputs/s",
                model.name,
                run.seed,
                ", ".join(f"{wording.name(metric)} {value:.4f}" for metric, value in scores.items()),
                throughput,
            )
            del classifier
    return entries, outputs, decisions, seed_scores, long_texts


def score_baselines(split: EvalSplit) -> dict:
    """The kind's reference rows, trained on the train split and scored on the evaluated one."""
    return reported(split.kind).reference_rows(
        split.part("train"), split.part("validation"), split.part(split.name), len(split.labels)
    )


def error_analysis(
    split: EvalSplit, outputs: dict[str, np.ndarray], decisions: dict[str, np.ndarray], limit: int
) -> dict:
    """The examples the models disagree on (with their number; none counted for regression, whose values always
    differ) and each model's most confident mistakes (largest errors, for regression)."""
    kind, texts, gold, labels = split.kind, split.texts, split.gold, split.labels
    return {
        "disagreement_count": None if kind.gives_values else count_disagreements(decisions),
        "disagreements": disagreements(texts, gold, outputs, decisions, labels, limit, kind, split.pairs),
        "confident_mistakes": {
            name: confident_mistakes(texts, gold, outputs, decisions, name, labels, min(limit, 10), kind, split.pairs)
            for name in outputs
        },
    }


def write_report(
    output_dir: Path, results: dict, analysis: dict, figures: dict[str, bytes], predictions: Iterable[dict]
) -> None:
    with report_directory(output_dir) as tmp:
        for name, png in figures.items():
            (tmp / name).write_bytes(png)
        write_predictions(tmp / "predictions.jsonl", predictions)
        (tmp / "report.md").write_text(render_markdown(results, analysis, list(figures)), encoding="utf-8")
        (tmp / "report.html").write_text(render_html(results, analysis, figures), encoding="utf-8")
        write_json(tmp / "results.json", results)


if __name__ == "__main__":
    sys.exit(main())
