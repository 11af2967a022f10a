"""Seeded random trials of `compare run --tune N`, drawn from each side's search space.

Each side declares its space in `core.sides` (`search_space`, option name -> distribution); a trial's
parameters become the side's flags (`learning_rate` -> `--learning-rate`).

`max_steps` is the training length: early stopping on validation may still end a trial sooner. It is the
one parameter whose range follows the profile (the side's `trial_lengths` under it): the quick profile's
trials leave out the longest length of each side, so that `compare run --task sst2 --profile quick --tune 4`
fits in an hour (docs/results.md, "Tuning on SST-2").

Trial i is drawn from its own generator, seeded by `(seed, i)`, so it is the same whatever the number
of trials: a rerun with a larger N keeps the first trials (and their finished runs) and adds new ones.

Examples:
    >>> trials = sample_trials("finetune", 3, seed=42)
    >>> trials[:2] == sample_trials("finetune", 2, seed=42)
    True
    >>> sorted({t["max_steps"] for t in sample_trials("finetune", 50, seed=0, profile="quick")})
    [250, 500, 1000]
    >>> sorted(trials[0])
    ['learning_rate', 'max_steps']
    >>> trial_flags({"learning_rate": 3e-05, "max_steps": 800})
    ['--learning-rate', '3e-05', '--max-steps', '800']
    >>> trial_name(7)
    'trial-007'
"""

from __future__ import annotations

import numpy as np

from core import sides
from core.distributions import Distribution


def tuned_sides() -> list[str]:
    """The sides with a search space, in declaration order."""
    return [side.name for side in sides.SIDES.values() if side.search_space]


def search_space(side: str, profile: str = "full") -> dict[str, Distribution]:
    """`side`'s search space under `profile`: its own, with the profile's training lengths when it sets them."""
    if side not in tuned_sides():
        raise ValueError(f"unknown side {side!r}: the search space covers {', '.join(tuned_sides())}")
    if profile not in sides.PROFILES:
        raise ValueError(f"unknown profile {profile!r}: training lengths are set for {', '.join(sides.PROFILES)}")
    declared = sides.get(side)
    lengths = declared.profiles[profile].trial_lengths
    return {**declared.search_space, **({"max_steps": lengths} if lengths else {})}


def sample_trials(side: str, n: int, seed: int, profile: str = "full") -> list[dict]:
    """The first `n` trials of `side`'s search space under `seed` and `profile`: `[{parameter: value}]`, prefix-stable."""
    space = search_space(side, profile)
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise ValueError(f"the number of trials must be a positive integer (--tune N with N >= 1); got {n!r}")
    return [_trial(space, seed, i) for i in range(n)]


def trial_flags(params: dict) -> list[str]:
    """A trial's parameters as the side's command-line flags: `learning_rate` -> `--learning-rate 3e-05`."""
    flags = []
    for name, value in params.items():
        flags += [f"--{name.replace('_', '-')}", f"{value:g}" if isinstance(value, float) else str(value)]
    return flags


def trial_name(index: int) -> str:
    """The run directory name of trial `index` (`trial-000`), the same on every rerun so finished trials are reused."""
    return f"trial-{index:03d}"


def _trial(space: dict, seed: int, index: int) -> dict:
    rng = np.random.default_rng([seed, index])
    return {name: distribution.sample(rng) for name, distribution in space.items()}
