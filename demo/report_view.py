"""The report tab's text: the verdict, headline and cost tables, each model's diagnosis, training time, tuning,
the curve and figure titles come from `compare.render`, word for word what report.md says; the table of runs
and the tables of a translation report (docs/formats.md, "Translation reports") are the demo's own."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from compare.render import figures, tables
from compare.render.curve import curve_summary
from compare.render.diagnosis import diagnosis_tables, training_curve_table
from compare.render.distillation import distillation_tables
from compare.render.format import count, pct, seconds
from compare.render.markdown import markdown_table
from compare.render.tables import Table
from compare.render.tuning import tuning_tables
from compare.report.locate import recorded_runs
from compare.scoring import wording
from compare.translation import figures as translation_figures
from compare.translation import render as translation
from compare.translation.render import score
from core import kinds
from core.record import DataSection, RunRecord, read_run
from demo.sources import Report

logger = logging.getLogger(__name__)

__all__ = [
    "checkpoint",
    "curve_summary",
    "diagnosis",
    "distillation",
    "figure_title",
    "headline",
    "report_runs",
    "runs_table",
    "training_time",
    "translation_comparisons",
    "translation_domains",
    "translation_runs_table",
    "translation_scores",
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


def distillation(results: dict[str, Any]) -> str:
    """With more than two models (a distilled student): every pair and the share of the gap the student closes."""
    return "\n".join(markdown_table(table) for table in distillation_tables(results))


def training_time(results: dict[str, Any]) -> str:
    """Validation accuracy after each epoch against training seconds, and who is ahead at equal time; or ""."""
    table = training_curve_table(results)
    return markdown_table(table) if table else ""


def tuning(results: dict[str, Any]) -> str:
    """The tuning tables of `compare run --tune N` (expected best of n trials, every trial); "" without tuning."""
    return "\n".join(markdown_table(table) for table in tuning_tables(results))


def figure_title(name: str, translation: bool = False) -> str:
    """A figure's caption as its report gives it: a translation report's own titles, else the classification
    report's (or the file name in words)."""
    return (translation_figures.TITLES.get(name) if translation else None) or figures.figure_title(name)


def data_cells(data: DataSection) -> tuple[str, str]:
    """A run's task (or train file name) and its "train / validation / test" sizes, from run.json's `data`."""
    task = data.options.get("task") or Path(str(data.options.get("train_file") or "?")).name
    splits = data.splits
    return task, " / ".join(f"{splits[s]:,}" if s in splits else "–" for s in ("train", "validation", "test"))


def correlation(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def validation_columns(kind: kinds.Kind) -> list[tuple[str, str, Any]]:
    """The validation scores the table of runs shows for a kind (`Kind.scores`, the headline first): each score's
    key, its column title and how a value is shown (a fraction in percent, a correlation as it is)."""
    return [
        (score, f"validation {wording.name(score)}" + (" %" if wording.is_fraction(score) else ""),
         pct if wording.is_fraction(score) else correlation)
        for score in kind.scores
    ]  # fmt: skip


def runs_table(runs: dict[str, RunRecord]) -> str:
    """What each run was trained on and how it did on validation, as a Markdown table; the validation scores are
    those of the first run's kind (`validation_columns`)."""
    scores = validation_columns(next(iter(runs.values())).kind if runs else kinds.get(None))
    rows = []
    for name, run in runs.items():
        training = run.training
        task, sizes = data_cells(run.data)
        rows.append(
            [
                name if name == run.side else f"{name} ({run.side})",
                checkpoint(run.model.name),
                task,
                sizes,
                count(run.model.params),
                seconds(training.seconds),
                f"{training.epochs_run} ({training.best_epoch})",
                *(shown(run.validation.get(key)) for key, _, shown in scores),
            ]
        )
    header = ["model", "checkpoint", "task", "train / validation / test", "parameters", "training time"]
    header += ["epochs (best)", *(title for _, title, _ in scores)]
    return markdown_table(Table("The runs", header, rows, note="From each run's run.json."))


def checkpoint(name: Any) -> str:
    """A model name as recorded; a local checkpoint directory is shown by its folder name only."""
    text = str(name or "?")
    return Path(text).name if text.startswith(("/", "./", "../")) else text


def report_runs(
    report: Report | None, models: dict[str, Any], translators: dict[str, Any] | None = None
) -> dict[str, RunRecord]:
    """The record of every run to describe (classification or translation): the report's runs by their report
    names, then the loaded ones the report does not hold (classifiers by side, translators by name)."""
    runs = {}
    if report is not None:
        for name, path in recorded_runs(report.directory).items():
            try:
                runs[name] = read_run(path, task=None)
            except (ValueError, OSError) as error:
                logger.warning("Cannot describe the run %s of the report: %s", name, error)
    for side, model in models.items():
        if not any(run.side == side for run in runs.values()):
            runs[model.name] = model.record
    for name, translator in (translators or {}).items():
        runs.setdefault(name, translator.record)
    return runs


def translation_scores(results: dict[str, Any]) -> str:
    """The translation report's score table (BLEU and chrF++ with 95% intervals) and its cost table."""
    return "\n".join(
        markdown_table(table) for table in (translation.scores_table(results), translation.cost_table(results))
    )


def translation_comparisons(results: dict[str, Any]) -> str:
    """The report's paired comparisons (a minus b, paired-bootstrap intervals and p); "" when there are none."""
    return markdown_table(translation.comparisons_table(results)) if results.get("comparisons") else ""


def translation_domains(results: dict[str, Any]) -> str:
    """The report's per-domain BLEU / chrF++ table; "" when the data has no domains."""
    table = translation.breakdown_table(results, "per_domain", "Per domain", "domain")
    return markdown_table(table) if table is not None else ""


def translation_runs_table(runs: dict[str, RunRecord]) -> str:
    """What each translation run was trained on and how it did on validation, as a Markdown table."""
    rows = []
    for name, run in runs.items():
        training = run.training
        task, sizes = data_cells(run.data)
        rows.append(
            [
                name,
                translation.architecture(run.model.arch or "?", (run.distillation or {}).get("teacher")),
                task,
                sizes,
                count(run.model.params),
                seconds(training.seconds),
                f"{training.epochs_run} ({training.best_epoch})",
                score(run.validation.get("bleu")),
                score(run.validation.get("chrf")),
            ]
        )
    header = ["model", "architecture", "task", "train / validation / test pairs", "parameters", "training time"]
    header += ["epochs (best)", "validation BLEU", "validation chrF++"]
    return markdown_table(Table("The translation runs", header, rows, note="From each run's run.json."))
