"""`TrainingConfig`: what one `fit` is asked to do, frozen, built from a trainer's options before training starts.

Free of TensorFlow, like the options it is built from.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from core.training.budget import TrainingPlan, balanced_class_weights, pass_examples

if TYPE_CHECKING:
    from core.args import BudgetArguments, ClassifierBudgetArguments
    from core.kinds import Kind


@dataclass(frozen=True)
class TrainingConfig:
    """How `core.training.fit` trains.

    Attributes:
        plan: the epochs and steps the budget gives (`BudgetArguments.plan`).
        examples: `examples(first_step, last_step)`, the training examples between two optimizer step counts, for
            the training log.
        patience: epochs without a better `monitor` before early stopping ends training.
        monitor: the Keras logs key early stopping watches and the best epoch is kept by (`val_accuracy`, ...).
        mode: `max` when higher `monitor` is better, `min` when lower.
        min_steps: optimizer steps before which early stopping may not end training.
        max_steps: the `--max-steps` budget (None: the planned epochs).
        eval_steps: validate every this many optimizer steps instead of after every pass (None: every pass).
        average_last: with 2 or more, the last epochs' weights are averaged when training ends (`AverageLast`).
        kind: the classifier's kind of task, whose validation scores `fit` derives from the model's outputs over the
            whole validation split after each epoch (`core.training.validation`); None for a model that is no
            classifier (validated by Keras' evaluation).
        class_weight: per label id, the loss weight of its examples (`--class-weight balanced`); None: all 1.
        time_budget: seconds of training (validations and resumed time included) after which the clock ends it
            (`--time-budget`, given in minutes); None: no clock.
    """

    plan: TrainingPlan
    examples: Callable[[int, int], int]
    patience: int
    monitor: str = "val_accuracy"
    mode: str = "max"
    min_steps: int = 0
    max_steps: int | None = None
    eval_steps: int | None = None
    average_last: int = 1
    kind: Kind | None = None
    class_weight: dict[int, float] | None = None
    time_budget: float | None = None

    @classmethod
    def from_arguments(
        cls,
        args: BudgetArguments,
        plan: TrainingPlan,
        examples: Callable[[int, int], int],
        monitor: str,
        mode: str,
        average_last: int = 1,
    ) -> TrainingConfig:
        """The configuration of a trainer's budget options (`patience`, the step bounds, the time budget in seconds)
        watching `monitor`."""
        return cls(
            plan=plan,
            examples=examples,
            patience=args.patience,
            monitor=monitor,
            mode=mode,
            min_steps=args.min_steps,
            max_steps=args.max_steps,
            eval_steps=args.eval_steps,
            average_last=average_last,
            time_budget=args.time_budget * 60 if args.time_budget is not None else None,
        )

    @classmethod
    def for_classifier(
        cls, args: ClassifierBudgetArguments, plan: TrainingPlan, kind: Kind, train_targets: np.ndarray, num_labels: int
    ) -> TrainingConfig:
        """A classifier's configuration: early stopping on the kind's `monitor` in its `mode`, the examples counted in
        batches of `args.batch_size` over `train_targets`, and the class weights `--class-weight balanced` asks for
        (refused by a kind without exclusive classes)."""
        kind.check_class_weight(args.class_weight)
        weights = balanced_class_weights(train_targets, num_labels) if args.class_weight == "balanced" else None
        examples = pass_examples(len(train_targets), plan.steps_per_epoch, args.batch_size)
        watching = cls.from_arguments(args, plan, examples, kind.monitor, kind.mode)
        return dataclasses.replace(watching, kind=kind, class_weight=weights)
