"""run.json as one typed, versioned record (docs/formats.md, `run.json`): read through `read_run`, written through
`write_run`, built by every trainer from a `RunContext`.

`RunRecord.from_json` validates a parsed run.json once (the schema version, each section's fields and their types,
the kind's validation scores, the side) and raises one `RunError` naming the file and the field; readers then use
attributes (`record.data.labels`, `record.training.history`, `record.kind.headline`). `to_json` gives the dict back,
unknown keys included, so a record read and written again is unchanged.

    >>> record = read_run("reports/sst2/runs/finetune")   # doctest: +SKIP
    >>> record.kind.headline, record.validation[record.kind.headline]   # doctest: +SKIP
    ('accuracy', 0.861)
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core import sides, task_kinds
from core.args import RunArguments
from core.kinds import Kind
from core.long_text import Reading
from core.rundir import RUN_JSON, RunError, environment, jsonable, partial_path, write_json
from core.task_kinds import CLASSIFICATION, TaskKind
from core.training.budget import STOP_REASONS, TrainingPlan

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Section:
    """A run.json object: its known keys as fields, the others kept in `extra`, the keys it had in `present` (so an
    optional key written as null stays null and an absent one stays absent)."""

    extra: dict[str, Any] = field(default_factory=dict, repr=False, compare=False, kw_only=True)
    present: tuple[str, ...] = field(default=(), repr=False, compare=False, kw_only=True)

    @classmethod
    def from_json(cls, value: Any, where: str, path: Path, task: TaskKind = CLASSIFICATION) -> Any:
        """The section of `value` (run.json's `where`, "" for the whole file) of a run of `task`, which may require
        some of its optional fields (`TaskKind.required`), or a RunError naming `path` and the first bad field."""
        if not isinstance(value, dict):
            raise RunError(f"{path}: {where or 'the file'} must be a JSON object; the run is damaged, train it again.")
        hints, known, given = typing.get_type_hints(cls), _fields(cls), {}
        needed = task.required.get(where, ())
        for name, f in known.items():
            dotted = f"{where}.{name}" if where else name
            if name not in value:
                if _required(f) or name in needed:
                    raise RunError(f"{path} lacks {dotted}; the run is incomplete, train it again.")
                continue
            if value[name] is None and name in needed:
                raise RunError(f"{path}: {dotted} is null; a {task.name} run needs it. Train the run again.")
            if not _fits(value[name], hints[name]):
                raise RunError(
                    f"{path}: {dotted} is {_shown(value[name])}, not {_type_name(hints[name])}; the run is damaged, "
                    "train it again."
                )
            section = _section(hints[name])
            given[name] = value[name] if section is None else section.from_json(value[name], dotted, path, task)
        extra = {k: v for k, v in value.items() if k not in known}
        return cls(**given, extra=extra, present=tuple(value))

    def to_json(self) -> dict[str, Any]:
        """The section as run.json holds it: its keys in the order read, an absent optional key left out."""
        out = {}
        for name, f in _fields(type(self)).items():
            value = getattr(self, name)
            if _required(f) or name in self.present or value != _default(f):
                out[name] = value.to_json() if isinstance(value, Section) else value
        out.update(self.extra)
        order = {name: i for i, name in enumerate(self.present)}
        return dict(sorted(out.items(), key=lambda item: order.get(item[0], len(order))))


@dataclass(frozen=True)
class ModelSection(Section):
    """run.json `model`: what was trained and how big it is."""

    name: str
    source: str
    params: int
    trainable_params: int
    architecture: str | None = None  # the fine-tuned side: the transformers class
    file: str | None = None  # the from-scratch side: the model file in the run
    arch: str | None = None  # translation: `encoder-decoder` or `decoder-only`
    config: dict | None = None  # the from-scratch network's shape


@dataclass(frozen=True)
class DataSection(Section):
    """run.json `data`: the options the data was loaded with, its splits and what they hold."""

    options: dict
    splits: dict
    fingerprints: dict
    source: str = ""
    problem_type: str | None = None  # classification only; absent in runs written before the other kinds
    headline_metric: str | None = None
    text_pair_column: str | None = None
    labels: list | None = None
    carved_from_train: list = field(default_factory=list)
    official_splits: dict = field(default_factory=dict)  # our split -> the official split it is, where they differ
    leakage: dict = field(default_factory=dict)
    value_range: list | None = None  # regression only
    columns: dict | None = None  # translation only

    @property
    def has_pairs(self) -> bool:
        """Whether each input is a `(text, text_pair)` pair."""
        return bool(self.text_pair_column)

    @property
    def reading(self) -> Reading:
        """How the run reads a text longer than its window (`--long-text`); `head` for a run recorded before the
        option, as it was trained."""
        return Reading.of(self.options)


@dataclass(frozen=True)
class TrainingSection(Section):
    """run.json `training`: how the training went (`core.training.fit`'s summary and what the side adds)."""

    seconds: float
    epochs_run: int
    best_epoch: int
    history: list
    examples_per_second: float
    steps: int | None = None
    budget: dict | None = None
    stop_reason: str | None = None
    early_stopping: dict | None = None
    averaged: dict | None = None
    truncated: dict | None = None
    class_weights: list | None = None


@dataclass(frozen=True)
class PretrainingSection(Section):
    """run.json `pretraining`: a from-scratch run's self-pretraining (`python -m scratch --self-pretrain`), absent
    from other runs."""

    objective: str
    steps: int  # optimizer steps pretraining took (resumed ones included)
    history: list  # one row per logging period: masked-LM `loss`, `masked_accuracy`, `steps`, ...
    texts: int  # the texts it pretrained on: train's inputs and the unlabelled file's
    planned_steps: int | None = None
    mask_rate: float | None = None
    seconds: float | None = None
    unlabeled_file: str | None = None  # --unlabeled-file as given; null without one
    unlabeled_rows: int | None = None  # the texts read from it
    passes: float | None = None  # passes over its texts the steps took
    stop_reason: str | None = None  # `budget` (its passes or steps) or `time` (--pretrain-time-budget)
    budget: dict | None = None  # {epochs, steps, time_budget_minutes} as asked
    validation_texts: int | None = None  # the validation texts its masked-LM loss is scored on


@dataclass(frozen=True)
class CalibrationSection(Section):
    """run.json `calibration`: the temperature scaling fitted on validation after training (`core.calibration`),
    which `predict_proba` and every export apply. Absent from a regression run, and from runs written before there
    was calibration, which predict at T = 1."""

    method: str
    temperatures: list
    validation_nll_before: float
    validation_nll_after: float


@dataclass(frozen=True)
class RunRecord(Section):
    """A whole run.json. `path` is the file it was read from (None for a record not yet written)."""

    side: str
    model: ModelSection
    data: DataSection
    hyperparameters: dict
    training: TrainingSection
    validation: dict
    environment: dict
    schema_version: int = SCHEMA_VERSION
    task_kind: str = CLASSIFICATION.name  # absent from run.json files written before there were other kinds
    created: str | None = None
    thresholds: list | None = None  # classification: multi-label decision thresholds, else null
    serving: dict | None = None
    distillation: dict | None = None
    tokenizer: dict | None = None
    pretraining: PretrainingSection | None = None
    calibration: CalibrationSection | None = None
    path: Path | None = field(default=None, repr=False, compare=False, kw_only=True)
    task: TaskKind = field(init=False, repr=False, compare=False)  # `task_kind`'s object (`core.task_kinds`)

    def __post_init__(self) -> None:
        object.__setattr__(self, "task", task_kinds.get(self.task_kind))

    @classmethod
    def from_json(
        cls, value: Any, where: str = "run.json", path: Path | None = None, task: TaskKind | None = None
    ) -> RunRecord:  # noqa: E501
        """Validates a parsed run.json once; `task` (None: whichever it records) is the task the caller needs."""
        path = Path(path or where)
        if not isinstance(value, dict):
            raise RunError(f"{path} must hold a JSON object; the run is damaged, train it again.")
        version = value.get("schema_version")
        if version != SCHEMA_VERSION:
            raise RunError(
                f"{path}: schema_version is {version!r}; this suite reads version {SCHEMA_VERSION}. Train the run again "
                "with this version of the suite."
            )
        try:
            found = task_kinds.get(value.get("task_kind", CLASSIFICATION.name))
        except ValueError as error:
            raise RunError(f"{path}: {error}") from None
        if task is not None and found is not task:
            side = f" of the {value.get('side')} side" if value.get("side") else ""
            raise RunError(f"{path} is a {found.name} run{side}, not a {task.name} run; give a {task.name} run.")
        record = dataclasses.replace(super().from_json(value, "", path, found), path=path)
        record.check(path)
        return record

    def check(self, path: Path) -> None:
        """What the section types cannot say: the side exists, why training ended is a known reason, the kind exists,
        the kind's validation scores."""
        try:
            sides.of_run(self)
        except ValueError as error:
            raise RunError(f"{path}: side: {error}") from None
        if self.training.stop_reason not in (None, *STOP_REASONS):
            raise RunError(
                f"{path}: training.stop_reason is {self.training.stop_reason!r}, not one of {', '.join(STOP_REASONS)}; "
                "the run is damaged or from a newer suite, train it again."
            )
        try:
            needed = self.task.validation_fields(self.data.problem_type)
        except ValueError as error:
            raise RunError(f"{path}: data.problem_type: {error}") from None
        missing = [name for name in needed if name not in self.validation]
        if missing:
            raise RunError(f"{path} lacks validation.{missing[0]}; the run is incomplete, train it again.")

    @property
    def kind(self) -> Kind:
        """The kind of task a classification run solves (single label for a run.json that names none); ValueError
        for a run of a task without kinds."""
        return self.task.kind(self.data.problem_type)

    @property
    def has_pairs(self) -> bool:
        return self.data.has_pairs

    @property
    def temperatures(self) -> list[float] | None:
        """The calibration's temperatures (one, or one per label); None where the run has none (T = 1)."""
        return None if self.calibration is None else [float(t) for t in self.calibration.temperatures]

    @property
    def labels(self) -> list[str]:
        return list(self.data.labels or [])

    @property
    def headline(self) -> str:
        """The score that ranks this run (translation: chrF)."""
        return self.task.headline(self.data.problem_type)

    @property
    def seed(self) -> int | None:
        return self.data.options.get("seed")

    @property
    def train_rows(self) -> int:
        return int(self.data.splits.get("train", 0))


def _fields(cls: type) -> dict[str, dataclasses.Field]:
    skip = {"extra", "present", "path", "task"}
    return {f.name: f for f in dataclasses.fields(cls) if f.name not in skip}


def _required(f: dataclasses.Field) -> bool:
    return f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING


def _default(f: dataclasses.Field) -> Any:
    return f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default


def _fits(value: Any, hint: Any) -> bool:
    """Whether a JSON value fits a field's annotation (int for float; a Section's field takes a dict)."""
    options = (
        typing.get_args(hint)
        if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union
        else (hint,)
    )
    for option in options:
        if option is type(None):
            if value is None:
                return True
            continue
        option = typing.get_origin(option) or option
        if isinstance(option, type) and issubclass(option, Section):
            option = dict
        if option is float and isinstance(value, int | float) and not isinstance(value, bool):
            return True
        if option is int and isinstance(value, bool):
            continue
        if isinstance(option, type) and isinstance(value, option):
            return True
    return False


def _section(hint: Any) -> type[Section] | None:
    """The Section class a field's annotation names, if any."""
    for option in typing.get_args(hint) or (hint,):
        if isinstance(option, type) and issubclass(option, Section):
            return option
    return None


def _shown(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _type_name(hint: Any) -> str:
    return " or ".join(
        "null"
        if t is type(None)
        else (
            "an object"
            if t in (dict,) or (isinstance(t, type) and issubclass(t, Section))
            else f"a {getattr(t, '__name__', t)}"
        )
        for t in (typing.get_args(hint) or (hint,))
    )


def read_run(run_dir: str | Path, task: TaskKind | None = CLASSIFICATION) -> RunRecord:
    """Reads and validates `run_dir/run.json` as a run of `task` (None: of the task it records), with errors
    that say what is missing and what to do."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        partial = partial_path(run_dir)
        hint = f" An unfinished run is in {partial}; rerun its command with --resume." if partial.is_dir() else ""
        raise RunError(f"Run directory {run_dir} does not exist.{hint}")
    path = run_dir / RUN_JSON
    if not path.is_file():
        raise RunError(
            f"{run_dir} is not a finished run: it has no {RUN_JSON}. Train it with `python -m finetune` or "
            "`python -m scratch`, or rerun an interrupted run with --resume."
        )
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise RunError(f"{path} is not valid JSON ({error}); the run is damaged, train it again.") from None
    return RunRecord.from_json(value, path=path, task=task)


def recorded_task(run_dir: str | Path) -> TaskKind | None:
    """The task `run_dir/run.json` records (`task_kind`), read without checking the rest of the file (reading the run
    does, and says what is wrong with it); None when the file is absent, unreadable or names no known task."""
    try:
        value = json.loads((Path(run_dir) / RUN_JSON).read_text(encoding="utf-8"))
        return task_kinds.get(value.get("task_kind", CLASSIFICATION.name))
    except (OSError, ValueError, AttributeError):
        return None


def write_run(run_dir: str | Path, body: dict[str, Any]) -> RunRecord:
    """The one writer of run.json: completes `body` (`run_record`'s, or a translation trainer's) with the schema
    version, the environment and the time, validates it as `RunRecord` and writes it atomically."""
    task = task_kinds.get(body.get("task_kind", CLASSIFICATION.name))
    body = {"schema_version": SCHEMA_VERSION, "task_kind": task.name, **body}
    body.setdefault("environment", environment(task.environment_packages))
    body.setdefault("created", _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"))
    path = Path(run_dir) / RUN_JSON
    record = RunRecord.from_json(json.loads(json.dumps(body, default=jsonable)), path=path)
    write_json(path, record.to_json())
    return record


# --- building a record from a finished training run ------------------------------------------------------------------


def count_params(model: Any) -> tuple[int, int]:
    """(all parameters, trainable parameters) of a built Keras model."""
    import numpy as np

    return int(model.count_params()), int(sum(np.prod(w.shape) for w in model.trainable_weights))


@dataclass
class RunContext:
    """A finished training run, as its record describes it.

    Attributes:
        side: the side's command (`core.sides`).
        model: the trained network, whose parameters the record counts.
        model_fields: run.json `model` besides the parameter counts: `name`, `source` and the side's own
            (`architecture`, `arch`, `file`, `config`).
        data: run.json `data` (the loaded data's `describe`).
        options: the trainer's options as used (its arguments dataclass as a dict, with what training settled,
            such as the warmup steps a ratio gave), and `max_length`, `seed`.
        run_args: where and how the run trained (`strategy`).
        plan: the epochs and steps the budget gave.
        replicas: devices that trained in sync.
        training: `core.training.fit`'s summary, with what the side adds.
        validation: the kept weights' validation scores (`Kind.validation_scores`).
        thresholds: a multi-label run's decision threshold per label, chosen on validation; None for the other kinds.
        calibration: the temperature scaling fitted on validation (`Kind.calibration`); None where none.
        task: the task trained (`core.task_kinds`).
        sections: other top-level sections (`serving`, `tokenizer`, `distillation`).
    """

    side: str
    model: Any
    model_fields: dict[str, Any]
    data: dict[str, Any]
    options: dict[str, Any]
    run_args: RunArguments
    plan: TrainingPlan
    replicas: int
    training: dict[str, Any]
    validation: dict[str, float]
    thresholds: list[float] | None = None
    calibration: dict[str, Any] | None = None
    task: TaskKind = CLASSIFICATION
    sections: dict[str, Any] = field(default_factory=dict)


def run_record(context: RunContext) -> dict[str, Any]:
    """run.json's body: `side`, `task_kind`, `model` (with the parameter counts), `data`, `hyperparameters` (the
    options with `strategy`, `replicas` and the plan's `epochs`, `steps_per_epoch` and `total_steps`), `training`,
    `validation`, for a classification task `thresholds`, `calibration` where fitted, and the other sections."""
    params, trainable = count_params(context.model)
    plan = context.plan
    return {
        "side": context.side,
        "task_kind": context.task.name,
        "model": {**context.model_fields, "params": params, "trainable_params": trainable},
        "data": context.data,
        "hyperparameters": {
            **context.options,
            "strategy": context.run_args.strategy,
            "replicas": context.replicas,
            "epochs": plan.epochs,  # what --epochs, or the budget, gave
            "steps_per_epoch": plan.steps_per_epoch,
            "total_steps": plan.total_steps,
        },
        "training": context.training,
        "validation": context.validation,
        **({"thresholds": context.thresholds} if context.task.records_thresholds else {}),
        **({"calibration": context.calibration} if context.calibration is not None else {}),
        **context.sections,
    }
