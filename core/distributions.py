"""The distributions a side's tuning search space is made of (`core.sides`), each drawing one value from a generator.

Learning rates are kept to 3 significant figures and dropout to 2 decimals, so the value a trial records is
exactly the flag its side was given.

Examples:
    >>> import numpy as np
    >>> Choice(("small", "base")).sample(np.random.default_rng(0)) in ("small", "base")
    True
    >>> 2e-5 <= LogUniform(2e-5, 2e-4).sample(np.random.default_rng(0)) <= 2e-4
    True
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


Distribution = LogUniform | Uniform | Choice
