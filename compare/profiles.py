"""Training profiles of `compare run`, as data: per side, data-option overrides and extra model flags.

`full` is each side's defaults (the settings that reach its quality targets). `quick` shortens training so
that `make report` (SST-2, both sides, the full test split) fits in 15 minutes on a 2-core CPU; it trains
each side on its own stratified subset, so the two train splits differ in size (the report says so) while
validation and test stay identical. A data option given on the command line wins over a profile's.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

SIDES = ("finetune", "scratch")


@dataclass(frozen=True)
class SideProfile:
    data: dict = field(default_factory=dict)  # DataArguments fields to override, e.g. max_train_samples
    flags: tuple[str, ...] = ()  # model flags appended to `python -m <side>`


PROFILES: dict[str, dict[str, SideProfile]] = {
    "full": {"finetune": SideProfile(), "scratch": SideProfile()},
    "quick": {
        "finetune": SideProfile(data={"max_train_samples": 12000}, flags=("--epochs", "1")),
        # Cheap enough to see the whole train split once.
        "scratch": SideProfile(flags=("--epochs", "1")),
    },
}


def get_profile(name: str) -> dict[str, SideProfile]:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"Unknown profile {name!r}; choose one of {', '.join(PROFILES)}.") from None


@dataclass
class TrainingArguments:
    """Where the output goes and how both sides are trained: shared by `compare run` and `compare curve`."""

    output_dir: str = field(metadata={"help": "Output directory; the runs go to its runs/ folder."})
    profile: str = field(default="quick", metadata={"help": f"Training profile: {' or '.join(PROFILES)}."})
    seeds: int = field(default=1, metadata={"help": "Train each side this many times (seeds --seed, --seed+1, ...)."})
    retrain: bool = field(default=False, metadata={"help": "Train again even when matching runs exist."})
    finetune_args: str = field(default="", metadata={"help": 'Extra flags for python -m finetune, e.g. "--epochs 2".'})
    scratch_args: str = field(default="", metadata={"help": 'Extra flags for python -m scratch, e.g. "--preset tiny".'})

    def __post_init__(self) -> None:
        get_profile(self.profile)
        if not 1 <= self.seeds <= 20:
            raise ValueError(f"--seeds must be between 1 and 20, got {self.seeds}.")
        for side in SIDES:
            try:
                shlex.split(getattr(self, f"{side}_args"))
            except ValueError as error:
                raise ValueError(f"--{side}-args cannot be split into flags: {error}.") from None

    def side_flags(self, side: str) -> list[str]:
        """The profile's flags for `side`, then the user's."""
        return [*get_profile(self.profile)[side].flags, *shlex.split(getattr(self, f"{side}_args"))]
