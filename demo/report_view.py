"""The report tab's text: the verdict, headline and cost tables, each model's diagnosis, training time, tuning,
the curve and figure titles come from `compare.render`, word for word what report.md says; only the table of
runs is the demo's own."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from compare.render import tables
from compare.render.curve import curve_summary
from compare.render.diagnosis import diagnosis_tables, training_curve_table
from compare.render.figures import figure_title
from compare.render.format import count, pct, seconds
from compare.render.markdown import markdown_table
from compare.render.tables import Table
from compare.render.tuning import tuning_tables
from compare.report.locate import recorded_runs
from core.rundir import read_run_json
from demo.sources import Report

logger = logging.getLogger(__name__)

__all__ = [
    "checkpoint",
    "curve_summary",
    "diagnosis",
    "figure_title",
    "headline",
    "report_runs",
    "runs_table",
    "training_time",
    "tuning",
    "verdict",
]


def verdict(results: dict[str, Any]) -> str:
    """The report's verdict line, as report.md leads with it."""
    if not (results.get("comparison") or {}).get("verdict"):
        return "The report holds no comparison of two models."
    return tables.verdict_markdown(results)


def headline(results: dict[str, Any]) -> str:
    """The report's quality table (95% intervals, baselines) and its cost table, in Markdown."""
    return markdown_table(tables.headline(results)) + "\n" + markdown_table(tables.cost(results))


def diagnosis(results: dict[str, Any]) -> str:
    """Each model's findings (what qualifies its score), as report.md lists them; "" for an older results.json."""
    return "\n".join(markdown_table(table) for table in diagnosis_tables(results))


def training_time(results: dict[str, Any]) -> str:
    """Validation accuracy after each epoch against training seconds, and who is ahead at equal time; or ""."""
    table = training_curve_table(results)
    return markdown_table(table) if table else ""


def tuning(results: dict[str, Any]) -> str:
    """The tuning tables of `compare run --tune N` (expected best of n trials, every trial); "" without tuning."""
    return "\n".join(markdown_table(table) for table in tuning_tables(results))


def runs_table(runs: dict[str, dict[str, Any]]) -> str:
    """What each run was trained on and how it did on validation, as a Markdown table."""
    rows = []
    for name, run in runs.items():
        data, training, validation = run["data"], run["training"], run["validation"]
        options = data.get("options") or {}
        task = options.get("task") or Path(str(options.get("train_file") or "?")).name
        splits = data.get("splits", {})
        sizes = " / ".join(f"{splits[s]:,}" if s in splits else "–" for s in ("train", "validation", "test"))
        rows.append(
            [
                name if name == run["side"] else f"{name} ({run['side']})",
                checkpoint(run["model"].get("name")),
                task,
                sizes,
                count(run["model"].get("params")),
                seconds(training.get("seconds")),
                f"{training.get('epochs_run', '?')} ({training.get('best_epoch', '?')})",
                pct(validation.get("accuracy")),
                pct(validation.get("macro_f1")),
            ]
        )
    header = ["model", "checkpoint", "task", "train / validation / test", "parameters", "training time"]
    header += ["epochs (best)", "validation accuracy %", "validation macro-F1 %"]
    return markdown_table(Table("The runs", header, rows, note="From each run's run.json."))


def checkpoint(name: Any) -> str:
    """A model name as recorded; a local checkpoint directory is shown by its folder name only."""
    text = str(name or "?")
    return Path(text).name if text.startswith(("/", "./", "../")) else text


def report_runs(report: Report | None, models: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """run.json of every run to describe: the report's runs by their report names, else the loaded ones."""
    runs = {}
    if report is not None:
        for name, path in recorded_runs(report.directory).items():
            try:
                runs[name] = read_run_json(path)
            except (ValueError, OSError) as error:
                logger.warning("Cannot describe the run %s of the report: %s", name, error)
    for side, model in models.items():
        if not any(run.get("side") == side for run in runs.values()):
            runs[model.name] = model.run
    return runs
