"""How `compare run` and `compare curve` train the two sides: output folder, profile, seeds and extra flags."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from compare.run.profiles import PROFILES, SIDES, get_profile


@dataclass
class SideTrainingArguments:
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
