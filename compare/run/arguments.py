"""How `compare run` and `compare curve` train the two sides: output folder, profile, seeds and extra flags."""

from __future__ import annotations

import dataclasses
import shlex
from dataclasses import dataclass, field

from compare.run.profiles import PROFILES, get_profile
from core import sides
from core.budget import CLASS_WEIGHTS


@dataclass
class SideTrainingArguments:
    """Where the output goes and how both sides are trained: shared by `compare run` and `compare curve`."""

    output_dir: str = field(metadata={"help": "Output directory; the runs go to its runs/ folder."})
    profile: str = field(default="quick", metadata={"help": f"Training profile: {' or '.join(PROFILES)}."})
    seeds: int = field(default=1, metadata={"help": "Train each side this many times (seeds --seed, --seed+1, ...)."})
    retrain: bool = field(default=False, metadata={"help": "Train again even when matching runs exist."})
    class_weight: str | None = field(
        default=None,
        metadata={
            "help": "Weigh the loss of both sides by class: none, or balanced (inverse class frequency). "
            "Default: the sides' own default (none)."
        },
    )
    finetune_args: str = field(default="", metadata={"help": 'Extra flags for python -m finetune, e.g. "--epochs 2".'})
    scratch_args: str = field(default="", metadata={"help": 'Extra flags for python -m scratch, e.g. "--preset tiny".'})
    distill: bool = field(
        default=False,
        metadata={
            "help": "Also distil each fine-tuned run into a from-scratch student (python -m scratch --teacher), "
            "the model scratch-distilled."
        },
    )
    distill_args: str = field(
        default="",
        metadata={"help": 'Extra flags for the distilled student after --scratch-args, e.g. "--augment 2".'},
    )

    def __post_init__(self) -> None:
        get_profile(self.profile)
        if not 1 <= self.seeds <= 20:
            raise ValueError(f"--seeds must be between 1 and 20, got {self.seeds}.")
        if self.class_weight is not None and self.class_weight not in CLASS_WEIGHTS:
            raise ValueError(f"--class-weight must be {' or '.join(CLASS_WEIGHTS)}, got {self.class_weight!r}.")
        for option in [*sides.classifier_names(), "distill"]:
            try:
                shlex.split(getattr(self, f"{option}_args", ""))
            except ValueError as error:
                raise ValueError(f"--{option}-args cannot be split into flags: {error}.") from None
        if self.distill_args and not self.distill:
            raise ValueError("--distill-args is for the distilled student; add --distill, or leave it out.")
        self.check_side_flags()

    def check_side_flags(self) -> None:
        """Parses each command's flags as the command will, so a flag it would refuse stops this one before any
        training rather than after the other side's."""
        from core.args import DataArguments

        data_flags = {f"--{f.name}" for f in dataclasses.fields(DataArguments)}
        data_flags |= {flag.replace("_", "-") for flag in data_flags}
        for option in [*sides.classifier_names(), "distill"]:
            given = [flag.split("=")[0] for flag in shlex.split(getattr(self, f"{option}_args", ""))]
            if data_flags & set(given):
                raise ValueError(
                    f"--{option}-args holds {sorted(data_flags & set(given))[0]}, a data option: give it to this "
                    "command itself, so that every model trains on the same data."
                )
        budget = not getattr(self, "tune", 0)  # a tuning trial brings its own training length
        for side in sides.classifier_names():
            check_command_flags(side, self.side_flags(side, budget))
        if self.distill:  # the teacher's path is checked when the student starts: it does not exist yet
            student = [
                *self.side_flags(sides.FROM_SCRATCH, budget),
                "--teacher",
                "TEACHER",
                *shlex.split(self.distill_args),
            ]
            check_command_flags(sides.FROM_SCRATCH, student, "--teacher")

    def side_flags(self, side: str, budget: bool = True) -> list[str]:
        """The profile's flags for `side` (its step budget only if `budget`), `--class-weight`, then the user's."""
        class_weight = ["--class-weight", self.class_weight] if self.class_weight else []
        user = shlex.split(getattr(self, f"{side}_args", ""))  # a side without its --<side>-args option: none
        return [*get_profile(self.profile)[side].side_flags(budget), *class_weight, *user]


def check_command_flags(side: str, flags: list[str], mode: str = "") -> None:
    """Raises `ValueError` with what `side`'s command (`python -m finetune`, or `python -m scratch --teacher` for
    `mode` "--teacher") would say of its model flags `flags`, when it would refuse them."""
    from core.args import DataArguments, OptionsError, RunArguments, parse_args

    command = " ".join(filter(None, (sides.get(side).command, mode)))
    try:
        parse_args(
            (DataArguments, RunArguments, sides.get(side).options()),
            ["--task", "sst2", "--output-dir", "_", *flags],
            True,
        )
    except OptionsError as error:
        raise ValueError(f"python -m {command} would refuse {shlex.join(flags)}: {error}") from None
