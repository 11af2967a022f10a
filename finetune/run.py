"""One fine-tuning run, from the parsed options to a finished run directory.

Every kind of task trains here (`core.kinds`): single-label, multi-label and regression, on single texts or on text
pairs, through `TFAutoModelForSequenceClassification` with the task's `num_outputs` and transformers' `problem_type`
in its config, so that the saved run loads with `from_pretrained`.

The run directory (`docs/formats.md`): the `save_pretrained` model and tokenizer, `run.json`, the model
card `README.md`, the training log `history.jsonl` and TensorBoard `logs/`. run.json's `training` is the shared
loop's (`core.callbacks.fit`, the same for every kind of run) plus `truncated` (texts cut per split) and, with
`--class-weight balanced`, `class_weights` (per label id); `hyperparameters` holds the options with the planned
`epochs`, `steps_per_epoch` and `total_steps`; `validation` holds the restored best epoch's scores of the task's
kind and `thresholds` a multi-label run's decision thresholds, chosen on validation (`core.kinds`).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import tensorflow as tf

from core import kinds
from core.args import DataArguments, RunArguments
from core.budget import TrainingPlan
from core.callbacks import fit_classifier, remove_training_state
from core.classifier import Kind
from core.data import TaskData, load_task
from core.record import RunContext, run_record
from core.rundir import finish_run, start_run, write_run_json
from core.runtime import is_chief, make_strategy, set_seed
from finetune.args import FinetuneArguments
from finetune.card import write_card
from finetune.checkpoint import Checkpoint, CheckpointError, resolve_checkpoint, tf_checkpoint
from finetune.onnx import write_checked
from finetune.pipeline import Encoded, encode, eval_dataset, steps_per_epoch, train_dataset
from finetune.predict import FinetunedClassifier
from finetune.train import build_model

logger = logging.getLogger(__name__)


def train(data_args: DataArguments, run_args: RunArguments, args: FinetuneArguments) -> Path:
    """Fine-tunes `args.model` on the task and returns the finished run directory.

    Every check on the model, the data and the output directory runs before training starts.
    """
    from transformers import AutoTokenizer

    checkpoint = resolve_checkpoint(args.model)
    check_max_length(checkpoint, data_args.max_length, args.model)
    tokenizer = AutoTokenizer.from_pretrained(checkpoint.directory)
    tf_checkpoint(checkpoint)  # converts PyTorch-only weights now, so a bad checkpoint fails before the data loads
    # Seeded after the conversion, whose model building draws random numbers: a run that converts the checkpoint
    # and one that finds it cached start from the same head
    # (docs/results.md, "One training loop: the same seed gives the same runs").
    set_seed(data_args.seed)
    task = load_task(data_args)
    kinds.check_class_weight(args.class_weight, task.problem_type)  # before the run directory exists
    strategy = make_strategy(run_args.strategy)
    chief = is_chief(strategy)
    keep = {"data": dict(task.fingerprints), "model": {"model": str(args.model), "pooling": args.pooling}}
    run_dir = start_run(run_args.output_dir, run_args.overwrite, run_args.resume, chief, keep)

    if args.mixed_precision:
        tf.keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        model, training, plan = _fit(task, checkpoint, tokenizer, data_args, args, strategy, run_dir)
    finally:
        tf.keras.mixed_precision.set_global_policy("float32")

    kind = Kind(task.problem_type, task.has_pairs, None)
    classifier = FinetunedClassifier(model, tokenizer, task.labels, data_args.max_length, kind=kind)
    texts, pairs, targets = task.texts("validation"), task.text_pairs("validation"), task.targets("validation")
    outputs = classifier.outputs(texts, pairs)
    classifier.thresholds = kinds.thresholds(task.problem_type, outputs, targets)
    validation = kinds.validation_scores(task.problem_type, targets, outputs, classifier.thresholds)
    logger.info("Validation: %s", ", ".join(f"{name} {value:.4f}" for name, value in validation.items()))

    model.save_pretrained(run_dir)
    tokenizer.save_pretrained(run_dir)
    if args.onnx:
        serving = write_checked(classifier, texts, pairs, outputs, run_dir)
    else:
        serving = {"runtime": "tensorflow", "note": "trained with --no-onnx"}
    remove_training_state(run_dir)
    context = RunContext(
        side="finetune",
        model=model,
        model_fields={"name": args.model, "source": checkpoint.source, "architecture": type(model).__name__},
        data=task,
        data_args=data_args,
        run_args=run_args,
        options={k: v for k, v in args.to_dict().items() if k != "model"},  # --model is model.name
        plan=plan,
        replicas=strategy.num_replicas_in_sync,
        training=training,
        validation=validation,
        thresholds=classifier.thresholds,
        sections={"serving": serving},
    )
    record = write_run_json(run_dir, run_record(context))
    write_card(run_dir, record)
    return finish_run(run_dir, run_args.output_dir, chief=chief)


def check_max_length(checkpoint: Checkpoint, max_length: int, name: str) -> None:
    """Refuses a `--max-length` longer than the positions the checkpoint was trained with."""
    from transformers import AutoConfig

    positions = getattr(AutoConfig.from_pretrained(checkpoint.directory), "max_position_embeddings", None)
    if positions is not None and max_length > positions:
        raise CheckpointError(
            f"--max-length {max_length} exceeds the {positions} positions {name} was trained "
            f"with; pass --max-length {positions} or less."
        )


def _fit(
    task: TaskData,
    checkpoint: Checkpoint,
    tokenizer,
    data_args: DataArguments,
    args: FinetuneArguments,
    strategy: tf.distribute.Strategy,
    run_dir: Path,
) -> tuple[tf.keras.Model, dict[str, Any], TrainingPlan]:
    encoded: dict[str, Encoded] = {}
    for split in ("train", "validation"):
        encoded[split] = encode(tokenizer, task.texts(split), data_args.max_length, task.text_pairs(split))
        if encoded[split].truncated:
            logger.warning(
                "%s: %d of %d %s are longer than --max-length %d tokens and were cut.",
                split,
                encoded[split].truncated,
                len(encoded[split].ids),
                "text pairs" if task.has_pairs else "texts",
                data_args.max_length,
            )
    lengths = encoded["train"].lengths
    logger.info("Train texts: mean %.1f tokens, longest %d", lengths.mean(), lengths.max())

    pad_id = tokenizer.pad_token_id
    targets = {split: task.targets(split) for split in encoded}
    train = train_dataset(
        encoded["train"], targets["train"], args.batch_size, data_args.max_length, pad_id, data_args.seed
    )
    validation = eval_dataset(encoded["validation"], targets["validation"], args.batch_size * 2, pad_id)
    plan = args.plan(steps_per_epoch(lengths, args.batch_size, data_args.max_length))
    with strategy.scope():
        model = build_model(checkpoint, task.labels, args, plan.total_steps, task.problem_type)
    labels = len(task.labels)
    training = fit_classifier(
        model, train, validation, run_dir, args, plan, targets["train"], labels, task.problem_type
    )
    training["truncated"] = {split: enc.truncated for split, enc in encoded.items()}
    return model, training, plan
