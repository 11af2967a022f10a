"""The commands of `python -m compare`: each one's options (modules free of TensorFlow, so that `--help` and a
refused option answer at once) and the function that does its work (`core.cli.Command`; exit statuses there).
"""

from __future__ import annotations

from pathlib import Path

from compare.bench.arguments import BenchArguments
from compare.curve.arguments import CurveArguments, CurveDataArguments
from compare.progress import setup_logging
from compare.report.arguments import PredictArguments, ReportArguments
from compare.run.arguments import CompareRunArguments
from compare.scoring.statistics import StatisticsArguments
from compare.translation.arguments import TranslationReportArguments, TranslationRunArguments
from core.args import DataArguments, PairDataArguments
from core.cli import Command
from core.task_kinds import CLASSIFICATION, TRANSLATION


def _logging(verbose: bool) -> None:
    setup_logging()


# What an interrupted command leaves that running it again uses (the others publish nothing unfinished).
NOTHING_KEPT = "nothing unfinished was kept"


def runs_kept(parsed: tuple) -> str:
    """What an interrupted command that trains runs under `--output-dir`'s runs/ kept: the finished runs, which the
    same command reuses, and each unfinished one, which it resumes from its backup (`compare.run.launch`)."""
    from core.rundir import kept_so_far

    options = next(options for options in parsed if hasattr(options, "output_dir"))
    kept = "the finished runs are kept and the same command reuses them"
    partials = sorted((Path(options.output_dir) / "runs").glob("*.partial"))
    if partials:
        unfinished = ", ".join(f"{partial} ({kept_so_far(partial)})" for partial in partials)
        kept += f"; it resumes the unfinished {'runs' if len(partials) > 1 else 'run'} {unfinished} from the backup"
    return kept


RUN = Command(
    prog="python -m compare run",
    description="Trains both models (or reuses their finished runs) on the same data, then writes the report.",
    arguments={
        CLASSIFICATION: (DataArguments, CompareRunArguments, StatisticsArguments),
        TRANSLATION: (PairDataArguments, TranslationRunArguments, TranslationReportArguments, StatisticsArguments),
    },
    work={
        CLASSIFICATION: "compare.run.command:run_comparison",
        TRANSLATION: "compare.translation.command:run_translation_comparison",
    },
    epilog="On a classification task the models are the fine-tuned BERT and the from-scratch Transformer; on a "
    "translation task, the from-scratch translator beside reference systems. The report (report.md, report.html, "
    "results.json) goes to --output-dir, the runs to its runs/ folder.",
    logging=_logging,
    kept=runs_kept,
)
REPORT = Command(
    prog="python -m compare report",
    description="Scores finished runs on the same split and writes the report (classification or translation runs).",
    arguments=(ReportArguments, StatisticsArguments),
    work="compare.report.command:report",
    logging=_logging,
    kept=NOTHING_KEPT,
)
PREDICT = Command(
    prog="python -m compare predict",
    description="Labels (or translates) a file's texts with every run and writes them beside its columns.",
    arguments=(PredictArguments,),
    work="compare.predict:predict_file",
    logging=_logging,
    kept=NOTHING_KEPT,
)
CURVE = Command(
    prog="python -m compare curve",
    description="Trains both models on growing train sizes and writes the learning curve (curve.json, curve.md).",
    arguments=(CurveDataArguments, CurveArguments),
    work="compare.curve.command:build_curve",
    logging=_logging,
    kept=runs_kept,
)
BENCH = Command(
    prog="python -m compare bench",
    description="Measures both models' training throughput, prediction latency, serving exports and the app under "
    "load, and writes bench.json and bench.md.",
    arguments=(DataArguments, BenchArguments),
    work="compare.bench.command:bench",
    logging=_logging,
    kept=runs_kept,
)
COMMANDS = {"run": RUN, "report": REPORT, "predict": PREDICT, "curve": CURVE, "bench": BENCH}
