"""`python -m compare run --task pt_en --output-dir DIR` (or own files with --source-column/--target-column).

Trains the from-scratch translator through `python -m scratch` into `DIR/runs/scratch` (with `--decoder-only`
also the decoder-only variant into `DIR/runs/scratch-decoder-only`; with `--distill` also the translator trained
on Bergamot's translations of the train sources into `DIR/runs/scratch-distilled`), reusing matching finished
runs, then writes the translation report into DIR (`compare.translation.report`): `compare run`'s work on a
translation task (`compare.commands`).
"""

from __future__ import annotations

import logging
from pathlib import Path

from compare.progress import Progress
from compare.report.publish import check_output_dir
from compare.run.launch import train_side
from compare.scoring.statistics import StatisticsArguments
from compare.translation.arguments import TRANSLATOR, TranslationReportArguments, TranslationRunArguments
from compare.translation.report import build_translation_report
from core import bergamot
from core.args import PairDataArguments
from core.cli import working
from core.pairs import language_pair, load_pairs

logger = logging.getLogger(__name__)


def run_translation_comparison(
    data: PairDataArguments,
    args: TranslationRunArguments,
    report: TranslationReportArguments,
    stats: StatisticsArguments,
    progress: Progress | None = None,
    **report_hooks,
) -> dict:
    """Checks the input (a refusal is a `UserError`, exit status 2), then trains (or reuses) each variant's run and
    writes the report into `args.output_dir`; returns results.json. A failure while working is a `WorkFailed`
    (exit status 1; `core.cli`).

    `report_hooks` go to `build_translation_report` (`loader`, `bergamot_factory`; tests replace them).
    """
    progress = progress or Progress()
    output_dir = Path(args.output_dir)
    check_output_dir(output_dir)  # before the training, not after
    load_pairs(data)  # a missing file or column fails here, in words, rather than inside the training command
    if args.distill:  # refused here, before the first variant trains, rather than by the distilled one's command
        bergamot.check_can_teach(language_pair(data.to_dict()), "--distill", "otherwise leave out --distill.")
    with working():
        paths = {}
        for name, flags in args.variants().items():
            paths[name], reused = train_side(TRANSLATOR, data, flags, output_dir / "runs" / name, args.retrain)
            progress.stage("%s %s: %s", "reused" if reused else "trained", name, paths[name])
        return build_translation_report(
            list(paths.values()), output_dir, stats, report, names=list(paths), progress=progress, **report_hooks
        )
