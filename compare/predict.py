"""`python -m compare predict --runs RUN [...] --input F --text-column COL --output F`: label a file with every run.

The output keeps the input's columns and adds, per model, its label and its probability of each class:
CSV columns `<name>_label` and `<name>_p_<label>`, or in JSONL a `predictions` object shaped like
predictions.jsonl's. Translation runs translate the column instead: a CSV column `<name>_translation` per
run, or in JSONL a `translations` object {name: text}. One call takes runs of one kind only.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from compare.progress import Progress
from compare.report.arguments import PredictArguments
from compare.report.results import predictions
from core.classifier import Classifier, find_runs, load
from core.data import as_text
from core.rundir import RunError
from core.tables import DataError, read_table
from core.translator import is_translation_run
from core.translator import load as load_translator

logger = logging.getLogger(__name__)

BATCH = 256


def main(argv: list[str] | None = None) -> int:
    """`python -m compare predict ...` (`compare.commands`)."""
    from compare.commands import PREDICT

    return PREDICT.main(argv)


def read_texts(path: Path, columns: list[str]) -> tuple[pd.DataFrame, list[str]]:
    """The input rows (read as the training data is, `core.tables.read_table`) and their texts: the columns
    joined with a space, missing values as empty text."""
    frame = read_table(path)
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise DataError(
            f"{path} has no column {missing[0]!r}; its columns are {', '.join(map(str, frame.columns))}. "
            "Choose with --text-column."
        )
    parts = [frame[c].to_numpy(dtype=object) for c in columns]
    texts = [" ".join(v for v in (as_text(p[i]) for p in parts) if v) for i in range(len(frame))]
    return frame, texts


def model_names(models: list[Classifier], paths: list[Path], names: list[str] | None) -> list[str]:
    if names is not None:
        if len(names) != len(models):
            raise RunError(f"--names gives {len(names)} name(s) for {len(models)} run(s); give one per run.")
        return list(names)
    sides = [m.side for m in models]
    return [side if sides.count(side) == 1 else path.name for side, path in zip(sides, paths)]


def predict_file(args: PredictArguments, loader=load) -> Path:
    """Labels every row of `args.input` with every run and writes `args.output`."""
    progress = Progress()
    paths = find_runs(args.runs)
    frame, texts = read_texts(Path(args.input), args.text_column)
    progress.stage("read %d rows from %s", len(texts), args.input)
    translation = [p for p in paths if is_translation_run(p)]
    classification = [p for p in paths if p not in translation]
    if translation and classification:
        raise RunError(
            f"{translation[0]} is a translation run but {classification[0]} is a classification run; "
            "predict with runs of one kind at a time."
        )
    if translation:
        return translate_file(args, paths, frame, texts, progress)
    models = [loader(path, None) for path in paths]
    names = model_names(models, paths, args.names)
    results = {}
    for name, model in zip(names, models):
        probs = np.concatenate([model.predict_proba(texts[i : i + BATCH]) for i in range(0, len(texts), BATCH)])
        results[name] = (model.labels, probs)
        progress.stage("predicted with %s", name)
    output = Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    write_predictions(frame, results, output)
    progress.stage("wrote %s", output)
    return output


def translate_file(args: PredictArguments, paths: list[Path], frame: pd.DataFrame, texts: list[str], progress) -> Path:
    """Translates every row's text with every translation run and writes `args.output`."""
    names = args.names or [path.name for path in paths]
    if len(names) != len(paths):
        raise RunError(f"--names gives {len(names)} name(s) for {len(paths)} run(s); give one per run.")
    translations = {}
    for name, path in zip(names, paths):
        translations[name] = load_translator(path).translate(texts, beam=args.beam, mbr=args.mbr)
        progress.stage("translated with %s", name)
    output = Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = output.with_name(output.name + ".tmp")
    if output.suffix.lower() == ".csv":
        out = frame.copy()
        for name, outputs in translations.items():
            out[f"{name}_translation"] = outputs
        out.to_csv(tmp, index=False)
    else:
        with tmp.open("w", encoding="utf-8") as handle:
            for i, record in enumerate(frame.to_dict(orient="records")):
                record["translations"] = {name: outputs[i] for name, outputs in translations.items()}
                handle.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
    tmp.replace(output)
    progress.stage("wrote %s", output)
    return output


def write_predictions(frame: pd.DataFrame, results: dict, output: Path) -> None:
    tmp = output.with_name(output.name + ".tmp")
    if output.suffix.lower() == ".csv":
        out = frame.copy()
        for name, (labels, probs) in results.items():
            out[f"{name}_label"] = [labels[i] for i in probs.argmax(axis=1)]
            for k, label in enumerate(labels):
                out[f"{name}_p_{label}"] = np.round(probs[:, k], 6)
        out.to_csv(tmp, index=False)
    else:
        records = frame.to_dict(orient="records")
        with tmp.open("w", encoding="utf-8") as handle:
            for i, record in enumerate(records):
                record["predictions"] = predictions(
                    {name: (labels, probs[i]) for name, (labels, probs) in results.items()}
                )
                handle.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
    tmp.replace(output)


if __name__ == "__main__":
    sys.exit(main())
