"""Training profiles of `compare run`: each side's step budget, extra model flags and data overrides (`core.sides`).

A profile is a budget, not an epoch count: each side trains on the whole train split for at least
`min_steps` and at most `max_steps` optimizer steps (`--min-steps` / `--max-steps` of the side), early
stopping on validation acting only between the two; the number of epochs follows from the train size.
`full` is each side's defaults (the settings that reach its quality targets); `quick` keeps `make report`
within its 15 minutes. A data option given on the command line wins over a profile's. How the `quick`
budgets were chosen, from measured runs: docs/results.md, "Step budgets".
"""

from __future__ import annotations

import dataclasses

from core import sides
from core.args import DataArguments
from core.sides import PROFILES, SideProfile

__all__ = ["PROFILES", "get_profile", "side_data"]


def get_profile(name: str) -> dict[str, SideProfile]:
    """The classification sides' settings under the profile `name`, by side."""
    if name not in PROFILES:
        raise ValueError(f"Unknown profile {name!r}; choose one of {', '.join(PROFILES)}.")
    return {side.name: side.profiles[name] for side in sides.classifiers()}


def side_data(data: DataArguments, side: str, profile: str, seed: int) -> DataArguments:
    """The data options one side trains with: the profile's overrides unless given explicitly, and `seed`."""
    defaults = DataArguments.__dataclass_fields__
    overrides = {
        key: value
        for key, value in get_profile(profile)[side].data.items()
        if getattr(data, key) == defaults[key].default
    }
    return dataclasses.replace(data, **overrides, seed=seed)
