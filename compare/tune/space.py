"""What `compare run --tune N` searches: each side's Optuna distributions, drawn by a trial, turned into its flags.

Each side declares its space in `core.sides` (`search_space`, option name -> `optuna.distributions` object); a
trial's parameters become the side's flags (`learning_rate` -> `--learning-rate`). `max_steps` is the training
length: early stopping or the pruner may still end a trial sooner. It is the one parameter whose range follows the
profile (the side's `trial_lengths` under it): the quick profile's trials leave out the longest length of each
side, so that `compare run --task sst2 --profile quick --tune 4` fits in an hour (docs/results.md, "Tuning on
SST-2").

`sample_trials` draws the first trials of a seeded in-memory study, as `compare run --tune` draws them into its
stored one (`compare.tune.sampling`): trial i is the same whatever the number of trials or of processes.

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

import optuna
from optuna.distributions import BaseDistribution, CategoricalDistribution, FloatDistribution, IntDistribution

from compare.tune.sampling import make_sampler
from core import sides


def tuned_sides() -> list[str]:
    """The sides with a search space, in declaration order."""
    return [side.name for side in sides.SIDES.values() if side.search_space]


def search_space(side: str, profile: str = "full") -> dict[str, BaseDistribution]:
    """`side`'s search space under `profile`: its own, with the profile's training lengths when it sets them."""
    if side not in tuned_sides():
        raise ValueError(f"unknown side {side!r}: the search space covers {', '.join(tuned_sides())}")
    if profile not in sides.PROFILES:
        raise ValueError(f"unknown profile {profile!r}: training lengths are set for {', '.join(sides.PROFILES)}")
    declared = sides.get(side)
    lengths = declared.profiles[profile].trial_lengths
    return {**declared.search_space, **({"max_steps": lengths} if lengths else {})}


def suggest(trial: optuna.Trial, space: dict[str, BaseDistribution]) -> dict:
    """Draws every parameter of `space` through the trial (so the study records it): `{parameter: value}`."""
    drawn = {}
    for name, distribution in space.items():
        if isinstance(distribution, CategoricalDistribution):
            drawn[name] = trial.suggest_categorical(name, distribution.choices)
        elif isinstance(distribution, IntDistribution):
            drawn[name] = trial.suggest_int(
                name, distribution.low, distribution.high, step=distribution.step, log=distribution.log
            )
        elif isinstance(distribution, FloatDistribution):
            drawn[name] = trial.suggest_float(
                name, distribution.low, distribution.high, step=distribution.step, log=distribution.log
            )
        else:
            raise TypeError(f"{name}: {type(distribution).__name__} is not a distribution a trial can draw")
    return drawn


def sample_trials(side: str, n: int, seed: int, profile: str = "full") -> list[dict]:
    """The first `n` trials of `side`'s search space under `seed` and `profile`: `[{parameter: value}]`, prefix-stable."""
    space = search_space(side, profile)
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise ValueError(f"the number of trials must be a positive integer (--tune N with N >= 1); got {n!r}")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize", sampler=make_sampler("random", seed))
    return [suggest(study.ask(), space) for _ in range(n)]


def trial_flags(params: dict) -> list[str]:
    """A trial's parameters as the side's command-line flags: `learning_rate` -> `--learning-rate 3e-05`. A float is
    written as Python writes it back (`repr`), so the side trains with exactly the value the study records."""
    flags = []
    for name, value in params.items():
        flags += [f"--{name.replace('_', '-')}", repr(value) if isinstance(value, float) else str(value)]
    return flags


def trial_name(index: int) -> str:
    """The run directory name of trial `index` (`trial-000`), the same on every rerun so finished trials are reused."""
    return f"trial-{index:03d}"
