"""The search space of `compare run --tune N`, per side, and seeded random trials drawn from it.

The space, as data (`SEARCH_SPACE`):

| side     | parameter       | distribution                                                  | side flag         |
|----------|-----------------|---------------------------------------------------------------|-------------------|
| finetune | `learning_rate` | log-uniform on [2e-5, 2e-4]                                   | `--learning-rate` |
| finetune | `max_steps`     | one of 250, 500, 1000, 2000 (`quick`: 250, 500, 1000)         | `--max-steps`     |
| scratch  | `learning_rate` | log-uniform on [1e-4, 3e-3]                                   | `--learning-rate` |
| scratch  | `max_steps`     | one of 500, 1000, 2000, 4000 (`quick`: 500, 1000, 2000)       | `--max-steps`     |
| scratch  | `dropout`       | uniform on [0.0, 0.3]                                         | `--dropout`       |
| scratch  | `preset`        | one of small, base                                            | `--preset`        |

`max_steps` is the training length: early stopping on validation may still end a trial sooner. It is the
one parameter whose range follows the profile (`TRAINING_LENGTHS`): the quick profile's trials leave out the
longest length of each side, so `compare run --task sst2 --profile quick --tune 4` fits in an hour here: 37
minutes, against 72 when its trials drew from the full range, half of which went to a 2,000-step fine-tuning
trial and a 4,000-step `base` trial (2026-12-01, docs/results.md "Tuning on SST-2").
Learning rates are kept to 3 significant figures and dropout to 2 decimals, so the recorded `params`
are exactly what the side was given.

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

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LogUniform:
    """A value whose logarithm is uniform on [log low, log high] (learning rates)."""

    low: float
    high: float
    significant: int = 3

    def __post_init__(self) -> None:
        if not 0 < self.low < self.high:
            raise ValueError(f"LogUniform needs 0 < low < high; got low={self.low}, high={self.high}")

    def sample(self, rng: np.random.Generator) -> float:
        value = math.exp(rng.uniform(math.log(self.low), math.log(self.high)))
        return float(f"{value:.{self.significant}g}")


@dataclass(frozen=True)
class Uniform:
    """A value uniform on [low, high], rounded to `decimals`."""

    low: float
    high: float
    decimals: int = 2

    def __post_init__(self) -> None:
        if not self.low < self.high:
            raise ValueError(f"Uniform needs low < high; got low={self.low}, high={self.high}")

    def sample(self, rng: np.random.Generator) -> float:
        return round(float(rng.uniform(self.low, self.high)), self.decimals)


@dataclass(frozen=True)
class Choice:
    """One of `values`, each equally likely."""

    values: tuple

    def __post_init__(self) -> None:
        if not self.values:
            raise ValueError("Choice needs at least one value")

    def sample(self, rng: np.random.Generator) -> int | float | str:
        return self.values[int(rng.integers(len(self.values)))]


SEARCH_SPACE: dict[str, dict[str, LogUniform | Uniform | Choice]] = {
    "finetune": {
        "learning_rate": LogUniform(2e-5, 2e-4),
        "max_steps": Choice((250, 500, 1000, 2000)),
    },
    "scratch": {
        "learning_rate": LogUniform(1e-4, 3e-3),
        "max_steps": Choice((500, 1000, 2000, 4000)),
        "dropout": Uniform(0.0, 0.3),
        "preset": Choice(("small", "base")),
    },
}

# `max_steps` per profile (`compare.run.profiles`): `full` keeps SEARCH_SPACE's, `quick` drops the longest.
TRAINING_LENGTHS: dict[str, dict[str, Choice]] = {
    "full": {side: space["max_steps"] for side, space in SEARCH_SPACE.items()},
    "quick": {"finetune": Choice((250, 500, 1000)), "scratch": Choice((500, 1000, 2000))},
}


def search_space(side: str, profile: str = "full") -> dict[str, LogUniform | Uniform | Choice]:
    """`side`'s search space under `profile`: SEARCH_SPACE with the profile's training lengths."""
    if side not in SEARCH_SPACE:
        raise ValueError(f"unknown side {side!r}: the search space covers {', '.join(SEARCH_SPACE)}")
    if profile not in TRAINING_LENGTHS:
        raise ValueError(f"unknown profile {profile!r}: training lengths are set for {', '.join(TRAINING_LENGTHS)}")
    return {**SEARCH_SPACE[side], "max_steps": TRAINING_LENGTHS[profile][side]}


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
