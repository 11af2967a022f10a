"""Training profiles of `compare run`, as data: per side, data-option overrides and extra model flags.

`full` is each side's defaults (the settings that reach its quality targets). `quick` shortens training so
that `make report` (SST-2, both sides, the full test split) fits in 15 minutes on a 2-core CPU; it trains
each side on its own stratified subset, so the two train splits differ in size (the report says so) while
validation and test stay identical. A data option given on the command line wins over a profile's.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from core.args import DataArguments

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


def side_data(data: DataArguments, side: str, profile: str, seed: int) -> DataArguments:
    """The data options one side trains with: the profile's overrides unless given explicitly, and `seed`."""
    defaults = DataArguments.__dataclass_fields__
    overrides = {
        key: value
        for key, value in get_profile(profile)[side].data.items()
        if getattr(data, key) == defaults[key].default
    }
    return dataclasses.replace(data, **overrides, seed=seed)
