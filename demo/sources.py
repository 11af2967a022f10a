"""What the demo serves: the report directory and runs it was pointed at, loaded once at start.

Report directories and their runs are found by `compare.report.locate` (the lookup `compare bench` uses
too); classification runs load through `core.classifier` and translation runs through `core.translator`
(never through training code). A missing report or a run that fails to load is reported on the page, not fatal.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from compare.report.locate import find_newest_report, recorded_runs, report_run_dirs
from core.classifier import find_runs, load
from core.record import read_run
from core.sides import STUDENT, of_run
from core.task_kinds import TASK_KINDS, TRANSLATION
from core.translator import load as load_translator
from demo.answers import answers, short
from demo.kinds import shown
from demo.task import task_of

logger = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[1]
CREATE_COMMAND = "make report"
COPY_SOURCE = "copy_source"
TRANSLATION_EXAMPLES = 12
EXAMPLES_PER_KIND = 6
EXAMPLE_MAX_CHARS = 300
LIVE_EXAMPLE_POOL = 128


@dataclass
class Example:
    """A test-split text (or pair) with its gold label and, when a report holds them, each model's prediction, as
    `demo.answers.short` says them (a class, the chosen labels, a value); a regression model's values in full."""

    text: str
    gold: str | None = None
    predictions: dict[str, str] = field(default_factory=dict)
    text_pair: str | None = None
    values: dict[str, float] = field(default_factory=dict)

    @property
    def disagreement(self) -> bool:
        """Whether the models decide differently: another class or another set of labels (values: `spread`)."""
        return len(set(self.predictions.values())) > 1

    @property
    def spread(self) -> float:
        """How far apart regression models are on this example: the largest value minus the smallest."""
        return max(self.values.values()) - min(self.values.values()) if self.values else 0.0

    @property
    def short_enough(self) -> bool:
        """Short enough to offer as an example (each text)."""
        texts = [self.text, *([] if self.text_pair is None else [self.text_pair])]
        return all(text.strip() and len(text) <= EXAMPLE_MAX_CHARS for text in texts)


@dataclass
class Report:
    """What the report tab shows: a report directory's results, figures, curve and chosen examples."""

    directory: Path
    results: dict[str, Any]
    figures: list[Path] = field(default_factory=list)
    curve: dict[str, Any] | None = None
    examples: list[Example] = field(default_factory=list)
    translations: list[TranslationExample] = field(default_factory=list)

    @property
    def is_translation(self) -> bool:
        return TASK_KINDS.get(self.results.get("task_kind")) is TRANSLATION


@dataclass
class TranslationExample:
    """A test-split sentence of a translation report, with each system's translation and its sentence chrF++
    against the reference."""

    source: str
    reference: str
    domain: str | None = None
    translations: dict[str, str] = field(default_factory=dict)
    chrf: dict[str, float] = field(default_factory=dict)

    @property
    def spread(self) -> float:
        """How far apart the systems are on this sentence: the best sentence chrF++ minus the worst."""
        return max(self.chrf.values()) - min(self.chrf.values()) if self.chrf else 0.0


def load_report(directory: str | Path) -> Report:
    """Reads a report directory: results.json (required), predictions.jsonl, *.png, curve.json."""
    directory = Path(directory)
    path = directory / "results.json"
    if not path.is_file():
        raise FileNotFoundError(
            f"{directory} is not a report directory: it has no results.json. Create one with `{CREATE_COMMAND}` "
            "or `python -m compare report --runs RUN RUN --output-dir DIR`."
        )
    results = _read_json(path)
    curve_path = directory / "curve.json"
    curve = _read_json(curve_path) if curve_path.is_file() else None
    predictions = directory / "predictions.jsonl"
    examples = pick_examples(read_predictions(predictions)) if predictions.is_file() else []
    translations = directory / "translations.jsonl"
    chosen = pick_translations(read_translations(translations)) if translations.is_file() else []
    return Report(directory, results, sorted(directory.glob("*.png")), curve, examples, chosen)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path} is not a readable JSON file ({error}); recreate the report that holds it.") from None


def read_predictions(path: Path) -> Iterator[Example]:
    """The rows of a report's predictions.jsonl (docs/formats.md: a class, a list of labels or a `value` per model)
    as examples; unreadable lines are skipped."""
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            try:
                row = json.loads(line)
                entries = row.get("predictions", {}).items()
                predictions = {name: short(p["value"] if "value" in p else p["label"]) for name, p in entries}
                values = {name: float(p["value"]) for name, p in entries if "value" in p}
                gold, pair = row.get("gold"), row.get("text_pair")
                yield Example(
                    str(row["text"]),
                    None if gold is None else short(gold),
                    predictions,
                    None if pair is None else str(pair),
                    values,
                )
            except (json.JSONDecodeError, KeyError, TypeError, AttributeError, ValueError):
                continue


def pick_examples(rows: Iterable[Example], per_kind: int = EXAMPLES_PER_KIND) -> list[Example]:
    """Up to `per_kind` disagreements and `per_kind` agreements, short texts only, spread over gold labels.

    Rows are taken in file order, one gold label after another, so every class shows up when it can. Regression
    rows (with values) are not agreements or disagreements: the `2 * per_kind` the models differ most on are
    taken, largest spread first.
    """
    rows = [row for row in rows if row.short_enough]
    if any(row.values for row in rows):
        return sorted(rows, key=lambda row: -row.spread)[: 2 * per_kind]
    pools: dict[bool, dict[Any, list[Example]]] = {True: {}, False: {}}
    for row in rows:
        pools[row.disagreement].setdefault(row.gold, []).append(row)
    chosen = []
    for disagreement in (True, False):
        queues = list(pools[disagreement].values())
        taken: list[Example] = []
        while len(taken) < per_kind and any(queues):
            for queue in queues:
                if queue and len(taken) < per_kind:
                    taken.append(queue.pop(0))
        chosen.extend(taken)
    return chosen


def read_translations(path: Path) -> Iterator[TranslationExample]:
    """The rows of a report's translations.jsonl (docs/formats.md, "Translation reports"); unreadable lines
    are skipped."""
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            try:
                row = json.loads(line)
                translations = {str(name): str(text) for name, text in row["translations"].items()}
                domain = row.get("domain")
                yield TranslationExample(str(row["source"]), str(row["reference"]), domain, translations)
            except (json.JSONDecodeError, KeyError, TypeError, AttributeError):
                continue


def pick_translations(rows: Iterable[TranslationExample], n: int = TRANSLATION_EXAMPLES) -> list[TranslationExample]:
    """Up to `n` short sentences, those the systems differ most on first (the spread of sentence chrF++
    against the reference; `copy_source`, the source copied unchanged, is not a system), ties in file order."""
    from sacrebleu.metrics import CHRF

    chrf = CHRF(word_order=2)  # chrF++, as the report scores
    chosen = []
    for row in rows:
        if row.source.strip() and len(row.source) <= EXAMPLE_MAX_CHARS:
            row.chrf = {
                name: chrf.sentence_score(text, [row.reference]).score
                for name, text in row.translations.items()
                if name != COPY_SOURCE
            }
            chosen.append(row)
    return sorted(chosen, key=lambda row: -row.spread)[:n]


def live_examples(models: dict[str, Any], seed: int = 0) -> list[Example]:
    """Examples from the runs' own test split when no report lists predictions; empty when it is not local.

    Only local data is read (a mirror under the run's data_dir or $TEXTCLS_DATA_DIR, or the run's files):
    the app never downloads. Every model answers a seeded sample so disagreements can be shown.
    """
    from core.args import DataArguments
    from core.data import load_task

    if not models:
        return []
    options = dict(next(iter(models.values())).record.data.options)
    try:
        if options.get("task"):
            data_dir = options.get("data_dir")
            if not (data_dir and (Path(data_dir) / options["task"]).is_dir()):
                options["data_dir"] = os.environ.get("TEXTCLS_DATA_DIR")
            if not (options["data_dir"] and (Path(options["data_dir"]) / options["task"]).is_dir()):
                return []
        elif not (options.get("train_file") and Path(options["train_file"]).is_file()):
            return []
        data = load_task(DataArguments(**options))
    except Exception as error:  # noqa: BLE001 - examples are optional; the demo works without them
        logger.warning("No examples from the test split: %s", error)
        return []
    texts, pairs, targets = data.texts("test"), data.text_pairs("test"), data.targets("test")
    kind = next(iter(models.values())).kind
    order = np.random.default_rng(seed).permutation(len(texts))[: 4 * LIVE_EXAMPLE_POOL]
    candidates = (
        Example(
            texts[i],
            short(kind.answer(data.labels, targets[i])),
            text_pair=None if pairs is None else pairs[i],
        )
        for i in map(int, order)
    )
    rows = [row for row in candidates if row.short_enough][:LIVE_EXAMPLE_POOL]
    if not rows:
        return []
    asked = [row.text for row in rows], None if pairs is None else [row.text_pair for row in rows]
    for name, model in models.items():
        try:
            found = answers(model, *asked)
        except Exception as error:  # noqa: BLE001 - a model that fails here still gets its own error at predict time
            logger.warning("The %s model could not label the examples: %s", name, error)
            continue
        for row, answer in zip(rows, found):
            decided = shown(model.kind).decision(answer)
            row.predictions[name] = short(decided)
            if model.kind.gives_values:
                row.values[name] = decided
    return pick_examples(rows)


def resolve_sources(
    report: str | None, runs: list[str] | None, roots: Iterable[Path] | None = None
) -> tuple[Path | None, list[Path]]:
    """The report directory and the run directories `--report` and `--runs` ask for (docs/formats.md).

    With neither, the newest report under `roots` (./reports, then reports/ beside this checkout) and its
    runs. Nothing found is not an error: the demo then says how to create a report.
    """
    report_dir = Path(report) if report else None
    if report_dir is None and not runs:
        roots = [Path.cwd() / "reports", ROOT / "reports"] if roots is None else roots
        report_dir = find_newest_report(roots)
        if report_dir is not None:
            logger.info("Serving the newest report: %s", report_dir)
    if runs:
        return report_dir, find_runs(runs)
    return report_dir, report_run_dirs(report_dir) if report_dir is not None else []


def load_translators(run_dirs: list[Path], report_dir: Path | None = None) -> tuple[dict[str, Any], list[str]]:
    """Loads each translation run through `core.translator.load`, keyed by its model name in the report at
    `report_dir`, else by its directory's name; returns them and what went wrong."""
    names = {path: name for name, path in recorded_runs(report_dir).items()} if report_dir is not None else {}
    translators: dict[str, Any] = {}
    problems = []
    for run_dir in run_dirs:
        name = names.get(Path(run_dir)) or Path(run_dir).name
        if name in translators:
            problems.append(f"Ignored {run_dir}: a translator named {name} is already being served.")
            continue
        try:
            translators[name] = load_translator(run_dir)
        except Exception as error:  # noqa: BLE001 - any loading failure is shown to the user as is
            logger.exception("Could not load %s", run_dir)
            problems.append(f"Could not load {run_dir}: {error}")
            continue
        translators[name].name = name
        logger.info("Loaded the translation run %s as %s", run_dir, name)
    return translators, problems


def load_models(run_dirs: list[Path], report_dir: Path | None = None) -> tuple[dict[str, Any], list[str]]:
    """Loads each classification run through `core.classifier.load`; returns them by name and what went wrong.

    A run that the report at `report_dir` (or, without one, its directory's name) calls `scratch-distilled` is
    served under that name; any other run by its side (`finetune`, `scratch`), and when another run of its side
    came first, as the report names it, else by its directory's name; when those are taken too, it is ignored. So is
    a run of another kind or input (`demo.task.Task.signature`) than the first one served: one page takes one kind of input.
    A run that fails to load is reported on the page rather than stopping the demo.
    """
    recorded = report_names(report_dir)
    models: dict[str, Any] = {}
    sources: dict[str, Path] = {}
    problems = []
    served = None  # the task of the first run served: the others must take the same inputs and answer alike
    for run_dir in map(Path, run_dirs):
        try:
            record = read_run(run_dir)
            task = task_of(record)
            if served is not None and task.signature != served.signature:
                problems.append(
                    f"Ignored {run_dir}: it is a run of {task.describe()}, the runs before it of {served.describe()}; "
                    f"serve it on its own with `python app.py --runs {run_dir}`."
                )
                continue
            given = recorded.get(run_dir.resolve())
            student = STUDENT if (given or run_dir.name).startswith(STUDENT) else None
            candidates = [student, of_run(record).name, given, run_dir.name]
            candidates = list(dict.fromkeys(name for name in candidates if name))
            name = next((n for n in candidates if n not in models), None)
            if name is None:
                taken = ", ".join(f"{n} ({sources[n]})" for n in candidates)
                problems.append(f"Ignored {run_dir}: every name it could be served under is taken: {taken}.")
                continue
            models[name], sources[name] = load(run_dir), run_dir
        except Exception as error:  # noqa: BLE001 - any loading failure is shown to the user as is
            logger.exception("Could not load %s", run_dir)
            problems.append(f"Could not load {run_dir}: {error}")
            continue
        models[name].name = name
        served = served or task
        labels = f", labels {models[name].labels}" if models[name].labels else ""  # none for regression
        logger.info("Loaded the run %s as %s (%s%s)", run_dir, name, task.describe(), labels)
    return models, problems


def report_names(report_dir: Path | None) -> dict[Path, str]:
    """The model name the report at `report_dir` gives each of its runs, by resolved run directory."""
    if report_dir is None:
        return {}
    return {path.resolve(): name for name, path in recorded_runs(report_dir).items()}
