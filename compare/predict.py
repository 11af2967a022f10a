"""`python -m compare predict --runs RUN [...] --input F --text-column COL --output F`: label a file with every run.

The output keeps the input's columns and adds, per model, its answer: CSV columns `<name>_label` (a multi-label
model's labels joined by `;`) and `<name>_p_<label>` (each class's or label's probability), or `<name>_value` for
a regression model; in JSONL a `predictions` object shaped like predictions.jsonl's. A run trained on pairs of
texts reads each row's second text from `--text-pair-column`. Translation runs translate the column instead: a
CSV column `<name>_translation` per run, or in JSONL a `translations` object {name: text}. One call takes
classification (and regression) runs or translation runs, not both.
"""

from __future__ import annotations

import json
import logging
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from compare.kinds import reported
from compare.progress import Progress
from compare.report.arguments import PredictArguments
from compare.scoring.scores import decide
from compare.scoring.timing import outputs
from core.classifier import Classifier, find_runs, load
from core.kinds import Kind
from core.reading import as_text
from core.record import read_run
from core.rundir import RunError
from core.tables import DataError, read_table
from core.tasks import MIRROR_LABEL_SEPARATOR
from core.translator import is_translation_run
from core.translator import load as load_translator

logger = logging.getLogger(__name__)

BATCH = 256


def main(argv: list[str] | None = None) -> int:
    """`python -m compare predict ...` (`compare.commands`)."""
    from compare.commands import PREDICT

    return PREDICT.main(argv)


def read_texts(
    path: Path, columns: list[str], pair_column: str | None = None
) -> tuple[pd.DataFrame, list[str], list[str] | None]:
    """The input rows (read as the training data is, `core.tables.read_table`), their texts (the columns joined
    with a space, missing values as empty text) and, with `pair_column`, their second texts."""
    frame = read_table(path)
    missing = [c for c in [*columns, *([pair_column] if pair_column else [])] if c not in frame.columns]
    if missing:
        flag = "--text-pair-column" if missing[0] == pair_column else "--text-column"
        raise DataError(
            f"{path} has no column {missing[0]!r}; its columns are {', '.join(map(str, frame.columns))}. "
            f"Choose with {flag}."
        )
    parts = [frame[c].to_numpy(dtype=object) for c in columns]
    texts = [" ".join(v for v in (as_text(p[i]) for p in parts) if v) for i in range(len(frame))]
    pairs = [as_text(v) for v in frame[pair_column].to_numpy(dtype=object)] if pair_column else None
    return frame, texts, pairs


def check_pairs(paths: list[Path], pair_column: str | None) -> None:
    """Refuses a pair run without `--text-pair-column`, and `--text-pair-column` for a run of single texts."""
    for path in paths:
        trained_on = read_run(path).data.text_pair_column
        if trained_on and not pair_column:
            raise RunError(
                f"{path} was trained on pairs of texts (the second from the column {trained_on!r}); pass "
                "--text-pair-column with the input's column of second texts."
            )
        if pair_column and not trained_on:
            raise RunError(
                f"{path} was trained on single texts, so it has no use for --text-pair-column {pair_column!r}; "
                "leave it out, or predict with runs trained on pairs."
            )


def model_names(models: list[Classifier], paths: list[Path], names: list[str] | None) -> list[str]:
    """Each model's name in the output's columns: `--names`, else its side, or its run directory's name where two
    models share a side. Two models may not share a name: their columns would overwrite each other."""
    if names is not None:
        if len(names) != len(models):
            raise RunError(f"--names gives {len(names)} name(s) for {len(models)} run(s); give one per run.")
        chosen = list(names)
    else:
        sides = [m.side for m in models]
        chosen = [side if sides.count(side) == 1 else path.name for side, path in zip(sides, paths)]
    for i, name in enumerate(chosen):
        if name in chosen[:i]:
            first = paths[chosen.index(name)]
            raise RunError(
                f"Runs {first} and {paths[i]} would both be called {name!r}, and their columns would overwrite each "
                "other; give each run once, and a name of its own with --names."
            )
    return chosen


def check_one_kind(models: list[Classifier], paths: list[Path]) -> None:
    """Refuses runs of different kinds of task or label sets: one output holds the answers to one task."""
    first = models[0]
    for model, path in zip(models[1:], paths[1:]):
        if model.kind != first.kind:
            raise RunError(
                f"{paths[0]} is a {first.kind.title} run but {path} is a {model.kind.title} run; predict with runs "
                "of one kind of task at a time."
            )
        if list(model.labels) != list(first.labels):
            raise RunError(
                f"{paths[0]} and {path} were trained on different labels ({', '.join(first.labels)} versus "
                f"{', '.join(model.labels)}); predict with runs of one task at a time."
            )


def predict_file(args: PredictArguments, loader=load) -> Path:
    """Labels every row of `args.input` with every run and writes `args.output`."""
    progress = Progress()
    paths = find_runs(args.runs)
    translation = [p for p in paths if is_translation_run(p)]
    classification = [p for p in paths if p not in translation]
    if translation and classification:
        raise RunError(
            f"{translation[0]} is a translation run but {classification[0]} is a classification run; "
            "predict with runs of one kind at a time."
        )
    if translation:
        frame, texts, _ = read_texts(Path(args.input), args.text_column)
        progress.stage("read %d rows from %s", len(texts), args.input)
        return translate_file(args, paths, frame, texts, progress)
    check_pairs(paths, args.text_pair_column)
    frame, texts, pairs = read_texts(Path(args.input), args.text_column, args.text_pair_column)
    progress.stage("read %d rows from %s", len(texts), args.input)
    models = [loader(path, None) for path in paths]
    names = model_names(models, paths, args.names)
    results = {}
    check_one_kind(models, paths)
    for name, model in zip(names, models):
        found = [
            outputs(model, texts[i : i + BATCH], None if pairs is None else pairs[i : i + BATCH])
            for i in range(0, len(texts), BATCH)
        ]
        answers = np.concatenate(found) if found else model.kind.empty_outputs(len(model.labels))
        results[name] = Answers(list(model.labels), model.kind, answers, decide(model, answers))
        progress.stage("predicted with %s", name)
    output = Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    write_predictions(frame, results, output)
    progress.stage("wrote %s", output)
    return output


@dataclass
class Answers:
    """One model's answers to every row: its outputs (probabilities, or values) and its decisions."""

    labels: list[str]
    kind: Kind
    outputs: np.ndarray
    decisions: np.ndarray


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
            for i, row in enumerate(frame.to_dict(orient="records")):
                row["translations"] = {name: outputs[i] for name, outputs in translations.items()}
                handle.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
    tmp.replace(output)
    progress.stage("wrote %s", output)
    return output


def write_predictions(frame: pd.DataFrame, results: dict[str, Answers], output: Path) -> None:
    tmp = output.with_name(output.name + ".tmp")
    if output.suffix.lower() == ".csv":
        out = frame.copy()
        for name, found in results.items():
            if found.kind.gives_values:
                out[f"{name}_value"] = np.round(found.outputs, 6)
                continue
            out[f"{name}_label"] = [csv_cell(found.kind.answer(found.labels, decision)) for decision in found.decisions]
            for k, label in enumerate(found.labels):
                out[f"{name}_p_{label}"] = np.round(found.outputs[:, k], 6)
        out.to_csv(tmp, index=False)
    else:
        records = frame.to_dict(orient="records")
        with tmp.open("w", encoding="utf-8") as handle:
            for i, row in enumerate(records):
                row["predictions"] = {
                    name: reported(found.kind).prediction(found.labels, found.outputs[i], found.decisions[i])
                    for name, found in results.items()
                }
                handle.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
    tmp.replace(output)


def csv_cell(answer: str | list[str]) -> str:
    """A label, or a multi-label model's labels joined by `;` as the multi-label data files join them."""
    return MIRROR_LABEL_SEPARATOR.join(answer) if isinstance(answer, list) else answer


if __name__ == "__main__":
    sys.exit(main())
