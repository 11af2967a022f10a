"""Options of `compare run` and `compare curve`: output folder, profile, seeds and each side's extra flags.

A side's extra flags are `--side-args NAME="FLAGS"` (repeatable, one NAME per side of `core.sides`); each side
also has its own spelling, `--NAME-args "FLAGS"` (`--finetune-args`, `--scratch-args`), generated from the registry
(`with_side_flags`). Both tasks take them alike (`SideFlags`): a translation `compare run` gives `--scratch-args` to
the translator, and refuses by name a side its task does not train (`--finetune-args` on `--task pt_en`).

Every flag `compare run` will pass to a side is checked here, by the side's own parser (`check_command_flags`),
before any side starts. A `--max-steps` or `--min-steps` among a side's extra flags moves the profile's step
budget to fit it (`compare.run.profiles.give_way`): `--side-args finetune="--max-steps 20"` on the quick profile
trains at most 20 steps, its minimum lowered from 200 to 20.
"""

from __future__ import annotations

import dataclasses
import shlex
from dataclasses import dataclass, field

from compare.report.arguments import FAITHFULNESS_HELP
from compare.run.profiles import PROFILES, get_profile, give_way
from compare.tune.sampling import PRUNERS, SAMPLERS
from compare.tune.space import tuned_sides
from core import sides
from core.args import VERBOSE_HELP, OptionsError
from core.task_kinds import CLASSIFICATION, TaskKind
from core.training.budget import CLASS_WEIGHTS

# The help of the options a translation `compare run` takes alike (`compare.translation.arguments`).
OUTPUT_DIR_HELP = "The report directory; the runs go to its runs/ folder."
PROFILE_HELP = "How long each model trains: quick (a first look) or full (each side's own defaults)."
RETRAIN_HELP = (
    "Train every model again from the start, even when matching runs exist, discarding unfinished ones too "
    "(without it, finished runs are reused and interrupted ones resumed)."
)
SIDE_ARGS_HELP = (
    'Extra flags for one side\'s command, NAME="FLAGS" (e.g. finetune="--epochs 2" scratch="--preset tiny"; '
    "repeatable); a --max-steps or --min-steps there moves the profile's step budget to fit it. "
    '--NAME-args "FLAGS" is the same. A side the task does not train (a translation task trains scratch alone) is '
    "refused."
)


class SideFlags:
    """The user's extra flags per side, for the options of either task (`with_side_flags` adds their fields)."""

    side_args: list[str]

    def given_side_flags(self, task: TaskKind) -> tuple[dict[str, list[str]], dict[str, str]]:
        """The user's extra flags per side of `task`, from `--side-args NAME="FLAGS"` and each side's `--NAME-args`,
        split as a shell would; and how each was spelled (`--finetune-args`, `--side-args finetune=`), for messages.
        A side `task` has not, or a data option among a side's flags (it goes to this command, so that every model
        trains on the same data), is refused by name (ValueError)."""
        given = [(f"--side-args {name}=", name, flags) for name, _, flags in map(_name_and_flags, self.side_args)]
        for side in sides.SIDES.values():
            flags = getattr(self, _alias(side), "")  # the field generated for the side's own spelling
            if flags:
                given.append((side.options_flag, side.name, flags))
        known = ", ".join(sides.names_of(task))
        extra, spelling = {}, {}
        for spelled, name, flags in given:
            if name in sides.SIDES and task not in sides.SIDES[name].tasks:
                raise ValueError(
                    f"{spelled.rstrip('= ')} gives flags to {name}, which a {task.name} task does not train (its "
                    f"sides are {known}); leave them out."
                )
            if name not in sides.SIDES:
                raise ValueError(f"--side-args names the side {name!r}; the sides are {known}.")
            if name in extra:
                raise ValueError(
                    f"{spelling[name]} and {spelled} both give {name}'s flags; give them once, in one of the two."
                )
            spelling[name] = spelled.rstrip("= ")
            extra[name] = split_flags(spelling[name], flags)
            refuse_data_flags(spelling[name], extra[name], task.data_arguments)
        return extra, spelling


def with_side_flags(options: type) -> type:
    """`options` (a dataclass) with the fields that take each side's extra flags: `--side-args NAME="FLAGS"` and
    one `--NAME-args "FLAGS"` per side of the registry, generated here so that a side added to `core.sides` gets
    its own without a line in this module."""
    made = dataclasses.make_dataclass(
        options.__name__.lstrip("_"),
        [
            (
                "side_args",
                list[str],
                field(
                    default_factory=list,
                    metadata={"help": SIDE_ARGS_HELP, "action": "extend", "metavar": 'NAME="FLAGS"'},
                ),
            ),
            *(
                (
                    _alias(side),
                    str,
                    field(default="", metadata={"help": f'The same as --side-args {side.name}="FLAGS".'}),
                )
                for side in sides.SIDES.values()
            ),
        ],
        bases=(options, SideFlags),
    )
    made.__module__, made.__doc__ = options.__module__, options.__doc__
    return made


@dataclass
class _SideTrainingArguments:
    """Where the output goes and how both sides are trained: shared by `compare run` and `compare curve`."""

    _argument_group_name = "comparison options"

    output_dir: str = field(metadata={"help": OUTPUT_DIR_HELP})
    profile: str = field(default="quick", metadata={"help": PROFILE_HELP, "choices": tuple(sorted(PROFILES))})
    seeds: int = field(default=1, metadata={"help": "Train each side this many times (seeds --seed, --seed+1, ...)."})
    retrain: bool = field(default=False, metadata={"help": RETRAIN_HELP, "aliases": ["--overwrite"]})
    class_weight: str | None = field(
        default=None,
        metadata={
            "help": "Weigh the loss of both sides by class: none, or balanced (inverse class frequency). "
            "Default: the sides' own (none).",
            "choices": CLASS_WEIGHTS,
        },
    )
    distill: bool = field(
        default=False,
        metadata={
            "help": "Also distil each fine-tuned run into a from-scratch student (python -m scratch --teacher), "
            "the model scratch-distilled."
        },
    )
    distill_args: str = field(
        default="",
        metadata={
            "help": "Extra flags for the distilled student after the from-scratch side's own "
            f'({sides.get(sides.FROM_SCRATCH).options_flag}), e.g. "--augment 2".'
        },
    )
    verbose: bool = field(default=False, metadata={"help": VERBOSE_HELP})

    def __post_init__(self) -> None:
        get_profile(self.profile)
        if not 1 <= self.seeds <= 20:
            raise ValueError(f"--seeds must be between 1 and 20, got {self.seeds}.")
        if self.class_weight is not None and self.class_weight not in CLASS_WEIGHTS:
            raise ValueError(f"--class-weight must be {' or '.join(CLASS_WEIGHTS)}, got {self.class_weight!r}.")
        self.extra, self.spelling = self.given_side_flags(CLASSIFICATION)
        split_flags("--distill-args", self.distill_args)
        if self.distill_args and not self.distill:
            raise ValueError("--distill-args is for the distilled student; add --distill, or leave it out.")
        self.check_side_flags()

    def check_side_flags(self) -> None:
        """Parses each command's flags as the command will, so a flag it would refuse stops this one before any
        training rather than after the other side's."""
        refuse_data_flags(
            "--distill-args", split_flags("--distill-args", self.distill_args), CLASSIFICATION.data_arguments
        )
        for side in sides.classifiers(None):
            budget = side.name not in self.tuned_sides()  # a tuning trial brings its own training length
            check_command_flags(side, self.side_flags(side.name, budget), self.origin(side.name, budget))
        if self.distill:  # the teacher's path is checked when the student starts: it does not exist yet
            student = [
                *self.side_flags(sides.FROM_SCRATCH, budget),
                "--teacher",
                "TEACHER",
                *shlex.split(self.distill_args),
            ]
            origin = f"{self.origin(sides.FROM_SCRATCH, budget)}, then --teacher" + (
                ", then --distill-args" if self.distill_args else ""
            )
            check_command_flags(sides.get(sides.FROM_SCRATCH), student, origin)

    def tuned_sides(self) -> list[str]:
        """The sides whose model is chosen by tuning trials (none here; `compare run --tune` has them)."""
        return []

    def side_flags(self, side: str, budget: bool = True) -> list[str]:
        """The profile's flags for `side` (its step budget only if `budget`, moved to fit the user's bounds),
        `--class-weight`, then the user's."""
        class_weight = ["--class-weight", self.class_weight] if self.class_weight else []
        user = self.extra.get(side, [])
        return [*give_way(get_profile(self.profile)[side].side_flags(budget), user), *class_weight, *user]

    def origin(self, side: str, budget: bool = True) -> str:
        """Where `side_flags` come from, for a message: `the quick profile's --min-steps 200 ..., then --finetune-args`."""
        profile = get_profile(self.profile)[side].side_flags(budget)
        given = [self.spelling[side]] if self.extra.get(side) else []
        if self.class_weight:
            given.insert(0, "--class-weight")
        parts = [f"the {self.profile} profile's {shlex.join(profile)}"] if profile else []
        return ", then ".join([*parts, *given]) or "no flags"


def _alias(side: sides.Side) -> str:
    """The field of a side's own spelling of its extra flags: `finetune_args` for `--finetune-args`."""
    return side.options_flag.removeprefix("--").replace("-", "_")


def _name_and_flags(given: str) -> tuple[str, str, str]:
    """`finetune=--epochs 2` as (`finetune`, `=`, `--epochs 2`), or `ValueError` saying what `--side-args` takes."""
    name, equals, flags = given.partition("=")
    if not equals or not name:
        raise ValueError(f'--side-args takes NAME="FLAGS", e.g. finetune="--epochs 2"; got {given!r}.')
    return name, equals, flags


def split_flags(option: str, flags: str) -> list[str]:
    """The flags given to `option` (`--finetune-args`) split as a shell would, or `ValueError` naming it."""
    try:
        return shlex.split(flags)
    except ValueError as error:
        raise ValueError(f"{option} cannot be split into flags: {error}.") from None


def refuse_data_flags(option: str, flags: list[str], data_arguments: type) -> None:
    """Refuses a data option among the flags given to `option` (`--finetune-args`): it goes to this command, so
    that every model trains on the same data."""
    data_flags = {f"--{f.name.replace('_', '-')}" for f in dataclasses.fields(data_arguments)}
    given = {flag.split("=")[0].replace("_", "-") for flag in flags}
    if data_flags & given:
        raise ValueError(
            f"{option} holds {sorted(data_flags & given)[0]}, a data option: give it to this command itself, "
            "so that every model trains on the same data."
        )


def check_command_flags(side: sides.Side, flags: list[str], origin: str = "") -> None:
    """Raises `ValueError` with what `side`'s command (`python -m <command>`) would say of the model flags `flags`,
    parsing them as it does on the side's task into its data, run and model options, when it would refuse them;
    `origin` says where they came from."""
    from core.args import RunArguments
    from core.parsing import CommandParser

    data, task = side.task.data_arguments, side.task.example_task
    parser = CommandParser((data, RunArguments, side.options()), prog=f"python -m {side.command}")
    try:
        parser.parse(["--task", task, "--output-dir", "_", *flags])
    except OptionsError as error:
        source = f" ({origin})" if origin else ""
        raise ValueError(f"python -m {side.command} would refuse {shlex.join(flags)}{source}: {error}") from None


SideTrainingArguments = with_side_flags(_SideTrainingArguments)


@dataclass
class CompareRunArguments(SideTrainingArguments):
    """Where the runs and the report go (the report in output_dir), and how the sides are trained."""

    def opted_in(self) -> list[str]:
        """The `compare run` flags given that add a side to the comparison (`core.sides.Side.opt_in`)."""
        flags = [side.opt_in for side in sides.classifiers(None) if side.opt_in]
        return [flag for flag in flags if getattr(self, flag.removeprefix("--").replace("-", "_"), False)]

    tune: int | None = field(
        default=None,
        metadata={
            "help": "Tune each side: N trials of an Optuna study over its search space, and keep the one with the "
            "best validation score, the task's headline (runs/tune/<side>/trial-NNN; the profile's step budget gives "
            "way to each trial's). Several processes or machines running the same command on one --tune-storage "
            "share the N trials."
        },
    )
    tune_sides: str | None = field(
        default=None,
        metadata={
            "help": "Tune only these sides, NAME[,NAME] (default: every side with a search space).",
            "metavar": "NAME[,NAME]",
        },
    )
    tune_sampler: str = field(
        default="random",
        metadata={
            "help": "How trials are drawn: random (Optuna's RandomSampler, seeded by --seed; the report's expected "
            "best of n trials assumes it) or tpe (Optuna's TPESampler).",
            "choices": SAMPLERS,
        },
    )
    tune_pruner: str = field(
        default="median",
        metadata={
            "help": "Which Optuna pruner stops a hopeless trial at a validation: median, hyperband, or none.",
            "choices": PRUNERS,
        },
    )
    tune_storage: str | None = field(
        default=None,
        metadata={
            "help": "Where the tuning studies live: a journal file (default: runs/tuning.journal in --output-dir) "
            "or a database URL (postgresql://user:password@host/db, mysql://...) that several machines reach.",
            "metavar": "URL",
        },
    )
    tune_study: str | None = field(
        default=None,
        metadata={
            "help": "The name the studies start with (default: the --output-dir folder's name), e.g. sst2 for the "
            "studies sst2/tune-scratch and sst2/runs-...; optuna-dashboard lists them by it."
        },
    )
    faithfulness: int = field(default=0, metadata={"help": FAITHFULNESS_HELP})

    self_pretrain: bool = field(
        default=False,
        metadata={
            "help": "Also train the from-scratch model self-pretrained (python -m scratch --self-pretrain: masked "
            "language modelling on the train split's texts first, within the same step budget), the model "
            "scratch-pretrained; the report says how much of the fine-tuned model's lead the pretraining objective "
            'explains. Its own flags: --scratch-pretrained-args (e.g. "--unlabeled-file more.txt").'
        },
    )

    audit_train: int | None = field(
        default=None,
        metadata={
            "help": "Also doubt the train split's gold labels: K-fold cross-validated probabilities of K small "
            "from-scratch models (the side's flags, at most 300 steps each; runs/audit-train/fold-<k>), which cost "
            "about K short from-scratch trainings. K from 2 to 20."
        },
    )

    def tuned_sides(self) -> list[str]:
        """The sides `--tune` tunes: those `--tune-sides` names, or every side with a search space."""
        if not self.tune:
            return []
        if self.tune_sides is None:
            return tuned_sides()
        return [name.strip() for name in self.tune_sides.split(",") if name.strip()]

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.tune and self.self_pretrain:
            raise ValueError("--self-pretrain does not combine with --tune yet; leave one of them out.")
        if self.extra.get(sides.SELF_PRETRAINED) and not self.self_pretrain:
            raise ValueError(
                f"{self.spelling[sides.SELF_PRETRAINED]} gives flags to the self-pretrained model; add "
                "--self-pretrain, or leave them out."
            )
        if self.audit_train is not None and not 2 <= self.audit_train <= 20:
            raise ValueError(f"--audit-train takes a number of folds from 2 to 20, got {self.audit_train}.")
        if self.tune and self.distill:
            raise ValueError(
                "--distill does not combine with --tune yet; distil the sides' profile runs without --tune."
            )
        tuning = {"--tune-sides": self.tune_sides, "--tune-storage": self.tune_storage, "--tune-study": self.tune_study}
        given = [flag for flag, value in tuning.items() if value is not None]
        if given and not self.tune:
            raise ValueError(f"{given[0]} is for tuning; add --tune N, or leave it out.")
        unknown = [name for name in self.tuned_sides() if name not in tuned_sides()]
        if unknown:
            raise ValueError(
                f"--tune-sides names {unknown[0]!r}; the sides with a search space are {', '.join(tuned_sides())}."
            )
        if self.tune_sides is not None and not self.tuned_sides():
            raise ValueError("--tune-sides names no side; give NAME[,NAME], e.g. scratch.")
        if self.tune is not None and self.tune < 1:
            raise ValueError(
                f"--tune must be a positive number of trials per side, got {self.tune}; leave it out to train "
                "each side once with the profile's settings."
            )
