"""Training, as every trainer runs it: the loop (`fit`, `core.training.loop`) configured by a `TrainingConfig`, its
callbacks, weight averaging, the training log and the step budget.

    >>> from core.training import TrainingConfig, fit   # doctest: +SKIP
    >>> config = TrainingConfig.for_classifier(args, plan, kind, train_targets, num_labels)   # doctest: +SKIP
    >>> training = fit(model, train, validation, run_dir, config)   # doctest: +SKIP

`fit` (and the loop's helpers) load TensorFlow when first named, so the budget and the configuration, which the
options read, keep `--help` fast.
"""

from __future__ import annotations

from typing import Any

from core.training.config import TrainingConfig

_LOOP = ("fit", "remove_training_state")

__all__ = ["TrainingConfig", *_LOOP]


def __getattr__(name: str) -> Any:
    if name in _LOOP:
        from core.training import loop

        return getattr(loop, name)
    raise AttributeError(f"module 'core.training' has no attribute {name!r}")
