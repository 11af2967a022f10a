"""The tasks the suite trains for, each one object owning what differs between them: classification (whose kind of
problem, `core.kinds`, each run records) and translation.

run.json names a run's task in `task_kind`; a command line names it by its task or columns (`--task pt_en`,
`--source-column`). Each is turned into its object once, where it enters (`get`, `named_by`), and code asks the
object instead of comparing names:

    >>> get("translation").headline(None), CLASSIFICATION.required
    ('chrf', {'data': ('labels',)})
    >>> named_by({"task": "pt_en"}).name, named_by({"train_file": "x.csv"}).name
    ('translation', 'classification')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from core import kinds
from core.args import DataArguments, PairDataArguments
from core.tasks import PAIR_TASKS

if TYPE_CHECKING:
    from core.kinds import Kind

TRANSLATION_WHEN = "with --task pt_en or --source-column"  # how a user names a translation task


class TaskKind:
    """One task the suite trains for. Subclasses set the class attributes and override what differs.

    Attributes:
        name: run.json `task_kind`.
        environment_packages: the packages run.json `environment` records besides every run's.
        required: per run.json section, the optional fields a run of this task must hold.
        records_thresholds: whether run.json holds `thresholds` (null where the kind decides without).
        data_arguments: the data options a command parses for it.
        example_task: a named task of it, for checking a side's flags the way its command parses them.
        option_words: how a message names an option (`{s}`: "s" for several) only this task takes.
        own_files: how an error names a user's own files of this task.
    """

    name: ClassVar[str]
    environment_packages: ClassVar[tuple[str, ...]] = ()
    required: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    records_thresholds: ClassVar[bool] = False
    data_arguments: ClassVar[type]
    example_task: ClassVar[str]
    option_words: ClassVar[str]
    own_files: ClassVar[str]

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def named(self, given: dict[str, Any]) -> bool:
        """Whether a parsed command line (its options by name) names a task of this kind."""
        raise NotImplementedError

    def kind(self, problem_type: str | None) -> Kind:
        """The kind of problem of a run of this task that records `problem_type` (ValueError: it has none)."""
        raise ValueError(f"a {self.name} run has no classification kind")

    def validation_fields(self, problem_type: str | None) -> tuple[str, ...]:
        """The scores run.json `validation` must hold (ValueError: an unknown `problem_type`)."""
        raise NotImplementedError

    def headline(self, problem_type: str | None) -> str:
        """The score that ranks a run of this task that records `problem_type`."""
        raise NotImplementedError


class Classification(TaskKind):
    """One text (or a pair) in, a class, a set of labels or a value out: the kind of problem says which."""

    name = "classification"
    required = {"data": ("labels",)}
    records_thresholds = True
    data_arguments = DataArguments
    example_task = "sst2"
    option_words = "classification option{s}"
    own_files = "--train-file without --source-column"

    def named(self, given: dict[str, Any]) -> bool:
        """Every command line not naming another task (the suite's default task)."""
        return True

    def kind(self, problem_type: str | None) -> Kind:
        return kinds.get(problem_type)

    def validation_fields(self, problem_type: str | None) -> tuple[str, ...]:
        return kinds.get(problem_type).validation_fields

    def headline(self, problem_type: str | None) -> str:
        return kinds.get(problem_type).headline


class Translation(TaskKind):
    """A sentence in one language in, its translation out; scored by BLEU and chrF++."""

    name = "translation"
    environment_packages = ("tensorflow-text", "sentencepiece", "sacrebleu")
    required = {"model": ("arch",), "data": ("columns",)}
    data_arguments = PairDataArguments
    example_task = "pt_en"
    option_words = f"translation option{{s}} ({TRANSLATION_WHEN})"
    own_files = "--train-file with --source-column"

    def named(self, given: dict[str, Any]) -> bool:
        """A translation task (`--task pt_en`) or, with no task, parallel-text columns."""
        if given.get("task") is not None:
            return given["task"] in PAIR_TASKS
        return bool({"source_column", "target_column"} & set(given))

    def validation_fields(self, problem_type: str | None) -> tuple[str, ...]:
        return ("bleu", "chrf")

    def headline(self, problem_type: str | None) -> str:
        return "chrf"


CLASSIFICATION, TRANSLATION = Classification(), Translation()
TASK_KINDS: dict[str, TaskKind] = {task.name: task for task in (CLASSIFICATION, TRANSLATION)}  # run.json order


def get(name: str) -> TaskKind:
    """The task run.json's `task_kind` names; ValueError naming the known ones otherwise."""
    try:
        return TASK_KINDS[name]
    except (KeyError, TypeError):
        raise ValueError(f"task_kind {name!r} is not one of {', '.join(TASK_KINDS)}.") from None


def named_by(given: dict[str, Any]) -> TaskKind:
    """The task a parsed command line names: the first, most specific first, that says the line names it."""
    return next(task for task in (TRANSLATION, CLASSIFICATION) if task.named(given))
