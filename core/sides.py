"""The sides of the comparison, each declared once: what trains it, what loads its runs, and how compare runs it.

A side is one family of models the suite trains and compares: the fine-tuned pretrained model (`finetune`), the
Transformer trained from scratch (`scratch`), that one self-pretrained (`scratch-pretrained`). Its entry in `SIDES`
holds every fact about it that lives outside its own package: its role in the suite's question (`role`: the
pretrained side, the from-scratch one), the command that trains it (`python -m <command>`), how `compare bench`
times it and the targets its figures are held to, how the report and the app name it, and, per task it trains for
(`core.task_kinds`), what differs between tasks (`SideTask`): its model option class and the module that loads its
runs for prediction (both named, imported only when used, so `--help` stays fast and compare never imports training
code), the budgets (steps, passes, minutes) of `compare run`'s profiles and the `--tune` search space. The
from-scratch side trains for both tasks: `python -m scratch` on a translation task trains the translator.

A side is looked up by name once, where it enters (a flag, a run.json), and travels as its object, under one task
(`Side.task`; `get(name, task)`, `Side.under`): its option class, predict module, profiles and search space are those
of that task. `compare run` takes each side's extra flags as `--side-args NAME="FLAGS"` (or `--NAME-args "FLAGS"`,
`Side.options_flag`), on either task. `compare` (run, report, predict, tune, curve, bench) and the app iterate
`SIDES`; adding a model to the comparison is one entry here beside its package.

A run's `run.json` names its side by the command that wrote it (`side`) and its task (`task_kind`): the
translator, `python -m scratch` on a translation task, records `side: scratch` and `task_kind: translation`, and
reads back as the from-scratch side under the translation task.

    >>> [side.name for side in classifiers()]
    ['finetune', 'scratch']
    >>> from types import SimpleNamespace as record
    >>> from core.task_kinds import CLASSIFICATION, TRANSLATION
    >>> translator = of_run(record(side="scratch", task=TRANSLATION))
    >>> translator.name, translator.task is TRANSLATION, translator.predict
    ('scratch', True, 'core.translator')
    >>> [side.name for side in of_task(TRANSLATION)]
    ['scratch']
    >>> get("finetune").profiles["quick"].side_flags()[:8]
    ['--min-steps', '0', '--epochs', '3', '--time-budget', '4', '--min-epochs', '1']
    >>> get("scratch", TRANSLATION).profiles["quick"].side_flags()
    ['--preset', 'small', '--max-steps', '1500']
    >>> PRETRAINED, FROM_SCRATCH, STUDENT, SELF_PRETRAINED
    ('finetune', 'scratch', 'scratch-distilled', 'scratch-pretrained')
    >>> [side.name for side in classifiers(["--self-pretrain"])]
    ['finetune', 'scratch', 'scratch-pretrained']
    >>> of_run(record(side="scratch", task=CLASSIFICATION, pretraining={"steps": 10})).name
    'scratch-pretrained'
"""

from __future__ import annotations

import importlib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from optuna.distributions import BaseDistribution, CategoricalDistribution, FloatDistribution

from core.task_kinds import CLASSIFICATION, TRANSLATION, TaskKind

if TYPE_CHECKING:
    from core.record import RunRecord

PROFILES = ("full", "quick")  # `compare run --profile`: `full` is each side's defaults, `quick` a short budget

# The suite asks whether fine-tuning a pretrained model beats training from scratch: the sides of these two roles
# are the report's first pair, the learning curve's catch-up, and distillation's teacher and student (`by_role`).
ROLES = ("pretrained", "from scratch")


@dataclass(frozen=True)
class Budget:
    """How long a side trains under a profile, in optimizer steps, passes over the train split and minutes.

    Early stopping may not stop before `min_steps`; training ends at `max_steps` (None: no step ceiling), after
    `passes` passes (`--epochs`; None: the side's own epochs, or as many as `max_steps` takes) or when `minutes` of
    training are spent (`--time-budget`; None: no clock), whichever comes first.
    """

    min_steps: int
    max_steps: int | None = None
    passes: int | None = None
    minutes: float | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.min_steps <= (self.max_steps if self.max_steps is not None else self.min_steps):
            raise ValueError(f"a budget needs 0 <= min_steps <= max_steps; got {self.min_steps} and {self.max_steps}")
        if self.passes is not None and self.passes < 1 or self.minutes is not None and not self.minutes > 0:
            raise ValueError(f"a budget needs at least one pass and minutes above 0; got {self.passes}, {self.minutes}")

    def flags(self) -> list[str]:
        flags = ["--min-steps", str(self.min_steps)]
        if self.max_steps is not None:
            flags += ["--max-steps", str(self.max_steps)]
        if self.passes is not None:
            flags += ["--epochs", str(self.passes)]
        if self.minutes is not None:
            flags += ["--time-budget", f"{self.minutes:g}"]
        return flags


@dataclass(frozen=True)
class SideProfile:
    """How a `compare run` profile trains one side (a budget, not an epoch count: see `compare.run.profiles`)."""

    budget: Budget | None = None  # None: the side's own defaults decide how long it trains
    flags: tuple[str, ...] = ()  # other model flags appended to `python -m <command>`
    data: dict = field(default_factory=dict)  # DataArguments fields to override, e.g. max_train_samples
    trial_lengths: CategoricalDistribution | None = None  # `--tune` trials' `max_steps` here; None: the space's own

    def side_flags(self, budget: bool = True) -> list[str]:
        """The budget's flags (unless `budget` is False, as for tuning trials, which bring their own), then the rest."""
        return [*(self.budget.flags() if budget and self.budget else []), *self.flags]


@dataclass(frozen=True)
class Target:
    """A figure of bench.json a side's benchmark is held to: `value <op> threshold`.

    Attributes:
        stage: where the figure is: `training` (the side's own section of bench.json), `predict` or `serving`
            (the side's entry in that section).
        key: the figure, dotted within that entry (`current.p50_ms`).
        op: `>=` or `<=`.
        threshold: the bound.
        label: what it means, for the bench report.
    """

    stage: str
    key: str
    op: str
    threshold: float
    label: str

    def __post_init__(self) -> None:
        if self.stage not in ("training", "predict", "serving") or self.op not in (">=", "<="):
            raise ValueError(f"a target needs a stage training, predict or serving and an op >= or <=; got {self}")


@dataclass(frozen=True)
class Benchmark:
    """How `compare bench` times a side's training: `python -m <command>.throughput`, rebuilt from a run's record.

    Attributes:
        steps: per bench profile, (timed steps per round, warm-up steps).
        model_options: the run.json `hyperparameters` that shape the model or its batches, passed back as flags.
        model_flag: the flag that takes run.json `model.name` (the pretrained checkpoint), if the side has one.
        targets: the figures its bench.json entries are held to (`compare.bench.results.targets`).
    """

    steps: Mapping[str, tuple[int, int]]
    model_options: tuple[str, ...]
    model_flag: str | None = None
    targets: tuple[Target, ...] = ()


@dataclass(frozen=True)
class SideTask:
    """What a side is under one task it trains for: what differs between its tasks.

    Attributes:
        arguments: its model option class, `module:Class`, imported only when used.
        predict: the module whose `load(run_dir, run)` returns a finished run's model (`core.classifier.Classifier`
            under classification, `core.translator.Translator` under translation).
        profiles: per `compare run` profile (`PROFILES`), its budget, flags and data overrides.
        search_space: `compare run --tune`'s Optuna distributions, by option name (empty: the side is not tuned).
    """

    arguments: str
    predict: str
    profiles: Mapping[str, SideProfile] = field(default_factory=lambda: {name: SideProfile() for name in PROFILES})
    search_space: Mapping[str, BaseDistribution] = field(default_factory=dict)


@dataclass(frozen=True)
class Side:
    """One side of the comparison, under one of the tasks it trains for.

    Attributes:
        name: how compare and the app call it: the default model name in a report, and `runs/<name>`.
        title: how the report and the app title it ("Fine-tuned BERT").
        phrase: how a sentence names it ("the fine-tuned model").
        command: the module that trains it, `python -m <command>`; its runs record it as run.json `side`.
        tasks: per task it trains for (`core.task_kinds`), in its order, what differs between them (`SideTask`).
        task: the task this object is under (None: its first); `options`, `predict`, `profiles` and `search_space`
            are that task's. `under` gives the same side under another.
        bench: how `compare bench` times its training of a classifier (None: not benchmarked).
        role: its place in the suite's question, one of `ROLES` (None: a model compared beside them).
        opt_in: the `compare run` flag that adds it to the comparison (`--self-pretrain`); None: always compared.
        marked_by: the run.json section only its runs have, telling them from the runs of another side with the same
            command (`pretraining`); None: a run without another side's mark is its.
    """

    name: str
    title: str
    phrase: str
    command: str
    tasks: Mapping[TaskKind, SideTask]
    task: TaskKind | None = None
    bench: Benchmark | None = None
    role: str | None = None
    opt_in: str | None = None
    marked_by: str | None = None

    def __post_init__(self) -> None:
        if not self.tasks:
            raise ValueError(f"side {self.name!r} trains for no task; give it at least one in `tasks`")
        if self.task is None:
            object.__setattr__(self, "task", next(iter(self.tasks)))
        if self.task not in self.tasks:
            tasks = ", ".join(task.name for task in self.tasks)
            raise ValueError(f"side {self.name!r} has no {self.task.name} task; its tasks are {tasks}")
        for task, settings in self.tasks.items():
            if set(settings.profiles) != set(PROFILES):
                raise ValueError(
                    f"side {self.name!r} gives profiles {sorted(settings.profiles)} for {task.name}; "
                    f"give {', '.join(PROFILES)}"
                )
        if self.role is not None and self.role not in ROLES:
            raise ValueError(f"side {self.name!r} has role {self.role!r}; the roles are {', '.join(ROLES)}")

    def under(self, task: TaskKind) -> Side:
        """The same side under `task`; ValueError naming the task's sides when it does not train for it."""
        if task not in self.tasks:
            raise ValueError(
                f"the {task.name} task has no side {self.name!r}; its sides are {', '.join(names_of(task))}"
            )
        return self if task is self.task else replace(self, task=task)

    @property
    def settings(self) -> SideTask:
        """What this side is under its task."""
        return self.tasks[self.task]

    @property
    def arguments(self) -> str:
        return self.settings.arguments

    @property
    def predict(self) -> str:
        return self.settings.predict

    @property
    def profiles(self) -> Mapping[str, SideProfile]:
        return self.settings.profiles

    @property
    def search_space(self) -> Mapping[str, BaseDistribution]:
        return self.settings.search_space

    @property
    def options_flag(self) -> str:
        """The `compare run` flag that takes this side's extra model flags alone: `--finetune-args`, the same as
        `--side-args finetune=...`."""
        return f"--{self.name}-args"

    def options(self) -> type:
        """The side's model option class under its task (a dataclass its command parses its model flags into)."""
        module, _, name = self.arguments.partition(":")
        return getattr(importlib.import_module(module), name)

    def load(self, run_dir: str | Path, record: RunRecord) -> Any:
        """The model of the finished run in `run_dir` (its record), through the side's predict module."""
        return importlib.import_module(self.predict).load(Path(run_dir), record)


SIDES: dict[str, Side] = {
    side.name: side
    for side in (
        Side(
            name="finetune",
            role="pretrained",
            title="Fine-tuned BERT",
            phrase="the fine-tuned model",
            command="finetune",
            tasks={
                CLASSIFICATION: SideTask(
                    arguments="finetune.args:FinetuneArguments",
                    predict="finetune.predict",
                    profiles={
                        "full": SideProfile(),
                        # Fine-tuning as it is done (docs/results.md, "Budgets that let each model finish"): up to
                        # 3 passes over the train split or 4 minutes, whichever ends first, the learning rate decaying
                        # to 0 where training will end; validated 3 times a pass (every 300 steps at most, so a
                        # clock-bound run on large data still validates), early stopping after 2 validations without
                        # a better score once one pass is done.
                        "quick": SideProfile(
                            budget=Budget(min_steps=0, passes=3, minutes=4),
                            flags=(
                                *("--min-epochs", "1", "--evals-per-epoch", "3"),
                                *("--eval-steps", "300", "--patience", "2"),
                            ),
                            trial_lengths=CategoricalDistribution((250, 500, 1000)),
                        ),
                    },
                    search_space={
                        "learning_rate": FloatDistribution(2e-5, 2e-4, log=True),
                        "max_steps": CategoricalDistribution((250, 500, 1000, 2000)),
                    },
                ),
            },
            bench=Benchmark(
                steps={"quick": (3, 2), "full": (6, 3)},
                model_options=("batch_size", "pooling"),
                model_flag="--model",
                targets=(
                    Target("training", "speedup_vs_pad128", ">=", 5.0, "fine-tuning examples/s vs 128-padded"),
                    Target("training", "useful_flops_utilisation", ">=", 0.30, "fine-tuning useful-FLOPs utilisation"),
                    Target("predict", "p50_ms", "<=", 15.0, "fine-tuned single-text p50 (ms)"),
                    Target(
                        "serving", "current.p50_ms", "<=", 6.0, "fine-tuned Classifier, float, single-text p50 (ms)"
                    ),
                    Target("serving", "int8.p50_ms", "<=", 3.0, "fine-tuned export, int8 TFLite, single-text p50 (ms)"),
                    Target(
                        "serving", "int8_accuracy_change", ">=", -0.005, "fine-tuned int8 TFLite test accuracy change"
                    ),
                    Target(
                        "serving", "onnx_int8.p50_ms", "<=", 3.0, "fine-tuned export, int8 ONNX, single-text p50 (ms)"
                    ),
                    Target(
                        "serving",
                        "onnx_int8_accuracy_change",
                        ">=",
                        -0.005,
                        "fine-tuned int8 ONNX test accuracy change",
                    ),
                    Target("training", "peak_rss_mb", "<=", 3072.0, "fine-tuning peak memory (MB)"),
                ),
            ),
        ),
        Side(
            name="scratch",
            role="from scratch",
            title="From-scratch Transformer",
            phrase="the from-scratch model",
            command="scratch",
            tasks={
                CLASSIFICATION: SideTask(
                    arguments="scratch.args:ScratchArguments",
                    predict="scratch.predict",
                    profiles={
                        "full": SideProfile(),
                        # An epoch count is unfair to the from-scratch model on small data: at least 800 steps, at
                        # most 2,000 or 3 minutes, validated every 250 steps (the budget may end inside the first
                        # epoch), and patience 3 so that one noisy validation does not end a run still climbing
                        # (docs/results.md, "Step budgets").
                        "quick": SideProfile(
                            budget=Budget(min_steps=800, max_steps=2000, minutes=3),
                            flags=("--patience", "3", "--eval-steps", "250"),
                            trial_lengths=CategoricalDistribution((500, 1000, 2000)),
                        ),
                    },
                    search_space={
                        "learning_rate": FloatDistribution(1e-4, 3e-3, log=True),
                        "max_steps": CategoricalDistribution((500, 1000, 2000, 4000)),
                        "dropout": FloatDistribution(0.0, 0.3, step=0.01),
                        "preset": CategoricalDistribution(("small", "base")),
                    },
                ),
                # The translator (`python -m scratch` on a translation task).
                TRANSLATION: SideTask(
                    arguments="scratch.translation.args:TranslationArguments",
                    predict="core.translator",
                    profiles={
                        "full": SideProfile(flags=("--preset", "base")),  # the preset's own epochs, early stopping
                        # The `small` preset's epochs, within 1,500 optimizer steps (docs/results.md, "Translation,
                        # pt_en").
                        "quick": SideProfile(flags=("--preset", "small", "--max-steps", "1500")),
                    },
                ),
            },
            bench=Benchmark(
                steps={"quick": (20, 5), "full": (60, 10)},
                model_options=(
                    "preset",
                    "num_layers",
                    "d_model",
                    "num_heads",
                    "d_ff",
                    "vocab_size",
                    "dropout",
                    "norm",
                    "activation",
                    "tokenizer",
                    "causal",
                    "batch_size",
                ),
                targets=(
                    Target("training", "speedup_vs_pad128", ">=", 3.0, "from-scratch examples/s vs 128-padded"),
                    Target("predict", "p50_ms", "<=", 3.0, "from-scratch single-text p50 (ms)"),
                    Target("serving", "current.p50_ms", "<=", 1.5, "from-scratch Classifier, single-text p50 (ms)"),
                    Target("training", "peak_rss_mb", "<=", 2048.0, "from-scratch training peak memory (MB)"),
                ),
            ),
        ),
    )
}


# The from-scratch side's code, self-pretrained (`python -m scratch --self-pretrain`): the plain model's profiles,
# its fine-tuning budget included, after a masked-LM pretraining with a budget of its own in passes and minutes
# (docs/results.md, "Budgets that let each model finish"): under `full` the default 10 passes, under `quick` at most
# 4 minutes of them.
SELF_PRETRAINED = "scratch-pretrained"
PRETRAINING_FLAGS = {"full": (), "quick": ("--pretrain-time-budget", "4")}
SIDES[SELF_PRETRAINED] = Side(
    name=SELF_PRETRAINED,
    title="From-scratch Transformer, self-pretrained",
    phrase="the self-pretrained from-scratch model",
    command=SIDES["scratch"].command,
    tasks={
        CLASSIFICATION: SideTask(
            arguments="scratch.pretraining:SelfPretrainedArguments",
            predict=SIDES["scratch"].predict,
            profiles={
                name: replace(profile, flags=(*profile.flags, "--self-pretrain", *PRETRAINING_FLAGS[name]))
                for name, profile in SIDES["scratch"].profiles.items()
            },
        )
    },
    opt_in="--self-pretrain",
    marked_by="pretraining",
)


def get(name: str, task: TaskKind | None = None) -> Side:
    """The side called `name`, under `task` (None: its first task); ValueError naming the known ones otherwise."""
    try:
        side = SIDES[name]
    except KeyError:
        raise ValueError(f"unknown side {name!r}; the sides are {', '.join(SIDES)}") from None
    return side if task is None else side.under(task)


def of_task(task: TaskKind, opted_in: Collection[str] | None = ()) -> list[Side]:
    """The sides that train for `task`, under it, in declaration order: of the sides with an `opt_in` flag those
    whose flag is among `opted_in` (None: all of them, as the options and profiles that name every side need)."""
    return [
        side.under(task)
        for side in SIDES.values()
        if task in side.tasks and (opted_in is None or side.opt_in is None or side.opt_in in opted_in)
    ]


def names_of(task: TaskKind) -> list[str]:
    """The names of every side that trains for `task`."""
    return [side.name for side in of_task(task, None)]


def classifiers(opted_in: Collection[str] | None = ()) -> list[Side]:
    """The classification sides (`of_task`): those `compare run`, `compare curve` and the app compare."""
    return of_task(CLASSIFICATION, opted_in)


def by_role(role: str) -> Side:
    """The side that plays `role` (`ROLES`) in the suite's question."""
    for side in SIDES.values():
        if side.role == role:
            return side
    raise ValueError(f"no side has the role {role!r}; the roles are {', '.join(ROLES)}")


PRETRAINED = by_role("pretrained").name  # the fine-tuned side: the report's first model, distillation's teacher
FROM_SCRATCH = by_role("from scratch").name  # the side trained from scratch: the second, and the student's command
STUDENT = f"{FROM_SCRATCH}-distilled"  # the model a pretrained run teaches (`compare run --distill`)


def classifier_names(opted_in: Collection[str] | None = ()) -> list[str]:
    """The names of `classifiers(opted_in)`: the models `compare run` trains, in its report's order."""
    return [side.name for side in classifiers(opted_in)]


def of_run(record: Any) -> Side:
    """The side that wrote a run (`core.record.RunRecord`), by its `side` (the command) and its task, under that task.

    Raises:
        ValueError: no side of that task records that name; the message lists those that do.
    """
    found = of_task(record.task, None)
    same = [side for side in found if side.command == record.side]
    marked = [side for side in same if side.marked_by and getattr(record, side.marked_by, None)]
    unmarked = [side for side in same if not side.marked_by]
    if marked or unmarked:
        return (marked or unmarked)[0]
    known = ", ".join(dict.fromkeys(side.command for side in found))
    raise ValueError(f"side {record.side!r} is not one of {known}.")


def run_title(record: Any) -> str:
    """How the report titles the model of a run (`core.record.RunRecord`): its side's title, "distilled" when a
    teacher taught it."""
    title = of_run(record).title
    return f"{title}, distilled" if record.distillation else title
