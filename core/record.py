"""The run record every trainer writes: one builder from a typed `RunContext` to run.json's body, for every side and
task kind. `core.rundir.write_run_json` completes it (schema version, task kind, environment, time), checks it
against its kind's schema and writes it (docs/formats.md, `run.json`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import tensorflow as tf

from core.args import RunArguments
from core.budget import TrainingPlan
from core.tasks import CLASSIFICATION


def count_params(model: tf.keras.Model) -> tuple[int, int]:
    """(all parameters, trainable parameters) of a built model."""
    return int(model.count_params()), int(sum(np.prod(w.shape) for w in model.trainable_weights))


@dataclass
class RunContext:
    """A finished training run, as its record describes it.

    Attributes:
        side: `finetune` or `scratch`.
        model: the trained network, whose parameters the record counts.
        model_fields: run.json `model` besides the parameter counts: `name`, `source` and the kind's own
            (`architecture`, `arch`, `file`, `config`).
        data: the loaded data (`core.data.TaskData` or `core.pairs.PairData`), described with `data_args`.
        data_args: the data options it was loaded with.
        run_args: where and how the run trained (`strategy`).
        options: the trainer's options as used (its arguments dataclass as a dict, with what training settled,
            such as the warmup steps a ratio gave).
        plan: the epochs and steps the budget gave.
        replicas: devices that trained in sync.
        training: `core.callbacks.fit`'s summary, with what the side adds.
        validation: the kept weights' validation scores (`core.kinds.validation_scores`).
        thresholds: a multi-label run's decision threshold per label, chosen on validation
            (`core.kinds.thresholds`); None for the other kinds.
        task_kind: `classification` or `translation`.
        sections: other top-level sections (`serving`, `tokenizer`, `distillation`).
    """

    side: str
    model: tf.keras.Model
    model_fields: dict[str, Any]
    data: Any
    data_args: Any
    run_args: RunArguments
    options: dict[str, Any]
    plan: TrainingPlan
    replicas: int
    training: dict[str, Any]
    validation: dict[str, Any]
    thresholds: list[float] | None = None
    task_kind: str = CLASSIFICATION
    sections: dict[str, Any] = field(default_factory=dict)


def run_record(context: RunContext) -> dict[str, Any]:
    """run.json's body: `side`, `task_kind`, `model` (with the parameter counts), `data`, `hyperparameters` (the
    options with `max_length`, `seed`, `strategy`, `replicas` and the plan's `epochs`, `steps_per_epoch` and
    `total_steps`), `training`, `validation`, for a classification task `thresholds`, and the other sections."""
    params, trainable = count_params(context.model)
    plan = context.plan
    return {
        "side": context.side,
        "task_kind": context.task_kind,
        "model": {**context.model_fields, "params": params, "trainable_params": trainable},
        "data": context.data.describe(context.data_args),
        "hyperparameters": {
            **context.options,
            "max_length": context.data_args.max_length,
            "seed": context.data_args.seed,
            "strategy": context.run_args.strategy,
            "replicas": context.replicas,
            "epochs": plan.epochs,  # what --epochs, or the budget, gave
            "steps_per_epoch": plan.steps_per_epoch,
            "total_steps": plan.total_steps,
        },
        "training": context.training,
        "validation": context.validation,
        **({"thresholds": context.thresholds} if context.task_kind == CLASSIFICATION else {}),
        **context.sections,
    }
