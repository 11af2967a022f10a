"""How a sweep's trials are drawn and stopped: the sampler and the pruner of `--tune-sampler` and `--tune-pruner`.

`random` (the default) is Optuna's `RandomSampler`, seeded per trial: trial i draws each parameter from a
`RandomSampler` seeded by (`--seed`, i, the parameter's name). Its draws are therefore independent (as the
report's expected-maximum curve of Dodge et al. 2019 assumes) and the same whichever process of a shared study
draws them, and however many trials came before: one `RandomSampler` per process would hand two processes with the
same seed the same trials. `tpe` is Optuna's `TPESampler` (seeded, with the constant liar that keeps several
processes from drawing where another is already training); its draws depend on the trials finished before them.

A sweep of fixed runs (the untuned sides, the chosen trials' other seeds, a learning curve's points) is a `Grid`,
Optuna's `GridSampler` over the runs' keys.

The pruners are Optuna's `MedianPruner` (the default) and `HyperbandPruner`, fed each trial's validations in
order (the step of a report is the validation's number: 1, 2, ...), or none.

Examples:
    >>> sampler = make_sampler("random", seed=7)
    >>> type(sampler).__name__, type(make_pruner("median")).__name__
    ('TrialSeededSampler', 'MedianPruner')
    >>> make_sampler("grid", seed=0)
    Traceback (most recent call last):
    ...
    ValueError: --tune-sampler takes random or tpe, not 'grid'
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import optuna
from optuna.distributions import BaseDistribution
from optuna.samplers import BaseSampler, GridSampler, RandomSampler, TPESampler

from core.studies import make_pruner

__all__ = ["PRUNERS", "SAMPLERS", "Grid", "TrialSeededSampler", "make_pruner", "make_sampler"]

SAMPLERS = ("random", "tpe")
PRUNERS = ("median", "hyperband", "none")


class TrialSeededSampler(BaseSampler):
    """Optuna's `RandomSampler`, seeded afresh for each trial and parameter by (seed, trial number, parameter name)."""

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def infer_relative_search_space(self, study: optuna.Study, trial: Any) -> dict[str, BaseDistribution]:
        return {}

    def sample_relative(self, study: optuna.Study, trial: Any, search_space: dict) -> dict[str, Any]:
        return {}

    def sample_independent(
        self, study: optuna.Study, trial: Any, param_name: str, param_distribution: BaseDistribution
    ) -> Any:
        entropy = [self.seed, trial.number, zlib.crc32(param_name.encode())]
        seed = int(np.random.SeedSequence(entropy).generate_state(1)[0])
        return RandomSampler(seed=seed).sample_independent(study, trial, param_name, param_distribution)


class Grid(GridSampler):
    """Optuna's `GridSampler` for a sweep driven by `ask` and `tell`: trial i takes grid point i, and the end of the
    grid is the sweep's own count of trials (`compare.tune.study.Sweep`), not `Study.stop`, which only
    `Study.optimize` may call."""

    def after_trial(self, study: optuna.Study, trial: Any, state: Any, values: Any) -> None:
        return None


def make_sampler(name: str, seed: int) -> BaseSampler:
    """The sampler `--tune-sampler name` draws with, seeded by `--seed`."""
    if name == "random":
        return TrialSeededSampler(seed)
    if name == "tpe":
        return TPESampler(seed=seed, constant_liar=True)
    raise ValueError(f"--tune-sampler takes {' or '.join(SAMPLERS)}, not {name!r}")
