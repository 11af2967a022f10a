"""Training profiles of `compare run`, as data: per side, a step budget, extra model flags and data overrides.

A profile is a budget, not an epoch count: each side trains on the whole train split for at least
`min_steps` and at most `max_steps` optimizer steps (`--min-steps` / `--max-steps` of the side), early
stopping on validation acting only between the two; the number of epochs follows from the train size.
`full` is each side's defaults (the settings that reach its quality targets). A data option given on the
command line wins over a profile's.

How the `quick` budgets were chosen, from measured runs:
- scratch: an epoch count is unfair to the from-scratch model on small data. On emotion with 6,000
  training rows, one epoch reached test accuracy 0.413, the side's defaults 0.835, and 1,000
  steps 0.862; on 1,000 training rows it was still rising at 600 steps. So at least 800 steps, and at most
  2,000 (under four epochs of SST-2's 67,349 rows at batch 128), with patience 3 so early stopping does not end a run that is
  still climbing after a noisy epoch.
- finetune: on SST-2, 400 steps at batch 32 (12,800 examples) reached test accuracy 0.868 and 500 steps
  0.882 (one seed each, 2026-12-01); 500 steps cost about 4 minutes here, which keeps `make report` within
  its 15 minutes. At least 200 so a small train split still gets a few hundred steps. The pretrained model needs far fewer steps than the from-scratch one.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from core.args import DataArguments

SIDES = ("finetune", "scratch")


@dataclass(frozen=True)
class Budget:
    """Optimizer steps a side trains for: early stopping may not stop before `min_steps`; training ends at `max_steps`."""

    min_steps: int
    max_steps: int

    def __post_init__(self) -> None:
        if not 0 <= self.min_steps <= self.max_steps:
            raise ValueError(f"a budget needs 0 <= min_steps <= max_steps; got {self.min_steps} and {self.max_steps}")

    def flags(self) -> list[str]:
        return ["--min-steps", str(self.min_steps), "--max-steps", str(self.max_steps)]


@dataclass(frozen=True)
class SideProfile:
    budget: Budget | None = None  # None: the side's own defaults decide how long it trains
    flags: tuple[str, ...] = ()  # other model flags appended to `python -m <side>`
    data: dict = field(default_factory=dict)  # DataArguments fields to override, e.g. max_train_samples

    def side_flags(self, budget: bool = True) -> list[str]:
        """The budget's flags (unless `budget` is False, as for tuning trials, which bring their own), then the rest."""
        return [*(self.budget.flags() if budget and self.budget else []), *self.flags]


PROFILES: dict[str, dict[str, SideProfile]] = {
    "full": {"finetune": SideProfile(), "scratch": SideProfile()},
    "quick": {
        "finetune": SideProfile(budget=Budget(min_steps=200, max_steps=500)),
        "scratch": SideProfile(budget=Budget(min_steps=800, max_steps=2000), flags=("--patience", "3")),
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
