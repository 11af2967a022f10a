"""Scores and the run record of a translation run: sacreBLEU and chrF++, `run.json`, and finishing the run."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any

import sacrebleu

from core.rundir import RUN_JSON, SCHEMA_VERSION, environment, finish_run, package_version, write_json
from core.translator import TASK_KIND, read_translation_run, validate_translation_run


def score(hypotheses: list[str], references: list[str]) -> dict[str, Any]:
    """Corpus sacreBLEU (13a tokenisation, cased) and chrF++ (chrF with word order 2), on the 0-100 scale."""
    bleu = sacrebleu.BLEU(tokenize="13a", lowercase=False)
    chrf = sacrebleu.CHRF(word_order=2)
    return {
        "bleu": bleu.corpus_score(hypotheses, [references]).score,
        "chrf": chrf.corpus_score(hypotheses, [references]).score,
        "signatures": {"bleu": str(bleu.get_signature()), "chrf": str(chrf.get_signature())},
    }


def write_translation_run_json(run_dir: Path, record: dict[str, Any]) -> dict[str, Any]:
    """Completes `record` (schema version, task kind, environment, time), checks it and writes run.json."""
    env = {**environment(), **{p: package_version(p) for p in ("tensorflow-text", "sentencepiece", "sacrebleu")}}
    record = {"schema_version": SCHEMA_VERSION, "task_kind": TASK_KIND, **record}
    record.setdefault("environment", env)
    record.setdefault("created", _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"))
    validate_translation_run(record, Path(run_dir) / RUN_JSON)
    write_json(Path(run_dir) / RUN_JSON, record)
    return record


def finish_translation_run(partial: Path, output_dir: Path, chief: bool = True) -> Path:
    """Checks the translation run.json in `partial` and moves it into place as `core.rundir.finish_run` does
    (on a non-chief worker, removes its temporary directory instead)."""
    return finish_run(partial, output_dir, chief=chief, check=read_translation_run)
