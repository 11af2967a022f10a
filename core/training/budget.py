"""Training budgets in optimizer steps: how many epochs a budget takes on a train split, the examples a number of
steps trains on, and class weights.

A side is given `--max-steps` (at most this many optimizer steps, resumed steps included) and
`--min-steps` (early stopping may not end training sooner); the epochs follow from the train size. `--time-budget`
(minutes of training, resumed time included) may end a plan sooner: the clock is `core.training.callbacks.TimeBudget`.
Without a budget, `--epochs` (or the side's default) is the plan, as before.

Examples:
    >>> plan_training(steps_per_epoch=10, default_epochs=3, max_steps=25)
    TrainingPlan(steps_per_epoch=10, epochs=3, total_steps=25)
    >>> plan_training(steps_per_epoch=10, default_epochs=3, max_steps=25, epochs=2)
    TrainingPlan(steps_per_epoch=10, epochs=2, total_steps=20)
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

logger = logging.getLogger(__name__)

CLASS_WEIGHTS = ("none", "balanced")
# Why training ended, as the training log and run.json `training.stop_reason` record it: the step budget
# (`--max-steps`), early stopping, the planned epochs, the clock (`--time-budget`), or a tuning study's pruner.
STOP_REASONS = ("budget", "early_stopping", "max_epochs", "time", "pruned")


@dataclass(frozen=True)
class TrainingPlan:
    """What `fit` is asked to do.

    Attributes:
        steps_per_epoch: optimizer steps of one pass over the train split.
        epochs: the most epochs `fit` runs.
        total_steps: the optimizer steps of the whole plan, which learning-rate schedules span.
    """

    steps_per_epoch: int
    epochs: int
    total_steps: int


def plan_training(
    steps_per_epoch: int,
    default_epochs: int,
    max_steps: int | None = None,
    min_steps: int = 0,
    epochs: int | None = None,
) -> TrainingPlan:
    """The epochs and total steps of a budget on a train split of `steps_per_epoch` steps.

    Args:
        steps_per_epoch: optimizer steps per epoch.
        default_epochs: the side's epochs when neither `epochs` nor a budget is given.
        max_steps: the step budget; the epochs are then ceil(max_steps / steps_per_epoch).
        min_steps: steps before which early stopping may not stop; without `max_steps` or `epochs`, the
            epochs grow to reach it.
        epochs: `--epochs` when given explicitly: an upper bound on the epochs.
    """
    if steps_per_epoch < 1:
        raise ValueError(f"steps_per_epoch must be at least 1, got {steps_per_epoch}.")
    if max_steps is not None:
        planned = math.ceil(max_steps / steps_per_epoch)
    else:
        planned = max(default_epochs, math.ceil(min_steps / steps_per_epoch))
    if epochs is not None:
        if epochs * steps_per_epoch < min_steps:
            logger.warning(
                "--epochs %d gives %d steps, fewer than --min-steps %d: training ends at the epoch limit.",
                epochs,
                epochs * steps_per_epoch,
                min_steps,
            )
        planned = min(planned, epochs) if max_steps is not None else epochs
    total = planned * steps_per_epoch if max_steps is None else min(planned * steps_per_epoch, max_steps)
    return TrainingPlan(steps_per_epoch, planned, total)


def bucketed_steps(lengths: np.ndarray, boundaries: list[int], batch_size: int) -> int:
    """Batches per epoch of `bucket_by_sequence_length`: every length bucket ends with one partial batch.

    A text of length L falls in bucket i when boundaries[i - 1] <= L < boundaries[i].
    """
    counts = np.bincount(np.searchsorted(boundaries, lengths, side="right"))
    return int(sum(math.ceil(c / batch_size) for c in counts if c))


def balanced_class_weights(label_ids: np.ndarray, num_labels: int) -> dict[int, float]:
    """Inverse class frequency, scikit-learn's `compute_class_weight("balanced")`: n / (classes * count).

    Classes absent from `label_ids` (they never reach the loss) get weight 1.
    """
    counts = np.bincount(np.asarray(label_ids, np.int64), minlength=num_labels)
    present = int((counts > 0).sum())
    return {k: float(len(label_ids) / (present * c)) if c else 1.0 for k, c in enumerate(counts)}


def pass_examples(rows: int, steps_per_pass: int, batch_size: int) -> Callable[[int, int], int]:
    """`TrainingLog`'s example count for batches of `batch_size` over `rows` examples, `steps_per_pass` batches a pass.

    A finished pass counts its rows; a pass cut short counts a batch per step, at most its rows.

    >>> count = pass_examples(rows=40, steps_per_pass=3, batch_size=16)
    >>> count(0, 3), count(3, 4), count(0, 7)
    (40, 16, 96)
    """

    def seen(steps: int) -> int:
        passes, rest = divmod(steps, steps_per_pass)
        return passes * rows + min(rows, rest * batch_size)

    return lambda first, last: seen(last) - seen(first)
