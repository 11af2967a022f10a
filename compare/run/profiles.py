"""Training profiles of `compare run`: each side's budget, extra model flags and data overrides (`core.sides`).

A profile is a budget in optimizer steps, passes over the train split and minutes, not a fixed epoch count: each
side trains on the whole train split for at least `min_steps` optimizer steps (`--min-steps`), and stops at
`max_steps` (`--max-steps`), after its passes (`--epochs`) or when its minutes are spent (`--time-budget`),
whichever comes first; early stopping on validation acts after the minimum. `full` is each side's defaults (the
settings that reach its quality targets); under `quick` the fine-tuned side trains one pass where the clock allows,
and each side stops at its time budget, so `make report` ends in minutes. A flag or data option given on the command
line wins over a profile's. How the `quick` budgets were chosen, from measured runs: docs/results.md, "Step
budgets" and "Budgets in passes and minutes".
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
    return {side.name: side.profiles[name] for side in sides.classifiers(None)}


BOUNDS = ("--min-steps", "--max-steps")


def give_way(profile_flags: list[str], user_flags: list[str]) -> list[str]:
    """A profile's flags with its step budget moved to fit the user's own bound, so that the two never conflict:
    a user's `--max-steps` below the profile's `--min-steps` lowers that minimum to it, and a user's `--min-steps`
    above the profile's `--max-steps` raises that maximum to it; a user's step bound without `--epochs` drops the
    profile's passes (`--epochs`), which would otherwise cap it. The user's flags come after and win anyway.

    >>> give_way(["--min-steps", "200", "--max-steps", "500"], ["--max-steps", "20"])
    ['--min-steps', '20', '--max-steps', '500']
    >>> give_way(["--min-steps", "200", "--max-steps", "500"], ["--min-steps=800"])
    ['--min-steps', '200', '--max-steps', '800']
    >>> give_way(["--preset", "small", "--max-steps", "1500"], ["--epochs", "2"])
    ['--preset', 'small', '--max-steps', '1500']
    >>> give_way(["--min-steps", "300", "--epochs", "1", "--time-budget", "8"], ["--max-steps", "2000"])
    ['--min-steps', '300', '--time-budget', '8']
    """
    user = _bounds(user_flags)
    flags = list(profile_flags)
    if user and "--epochs" in flags and not any(flag.split("=")[0] == "--epochs" for flag in user_flags):
        at = flags.index("--epochs")
        del flags[at : at + 2]
    for own, other, keep in (("--min-steps", "--max-steps", min), ("--max-steps", "--min-steps", max)):
        if own in flags and other in user and own not in user:
            at = flags.index(own) + 1
            flags[at] = str(keep(int(flags[at]), user[other]))
    return flags


def _bounds(flags: list[str]) -> dict[str, int]:
    """The step bounds among a command line's flags (`--max-steps 20`, `--max_steps=20`); the last one wins, as in
    argparse. A value that is not a whole number is left to the side's own parser to refuse."""
    found = {}
    for i, flag in enumerate(flags):
        name, equals, value = flag.partition("=")
        name = name.replace("_", "-")
        if name in BOUNDS:
            value = value if equals else (flags[i + 1] if i + 1 < len(flags) else "")
            if value.isdigit():
                found[name] = int(value)
    return found


def side_data(data: DataArguments, side: str, profile: str, seed: int) -> DataArguments:
    """The data options one side trains with: the profile's overrides unless given explicitly, and `seed`."""
    defaults = DataArguments.__dataclass_fields__
    overrides = {
        key: value
        for key, value in get_profile(profile)[side].data.items()
        if getattr(data, key) == defaults[key].default
    }
    return dataclasses.replace(data, **overrides, seed=seed)
