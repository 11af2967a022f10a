"""One fine-tuning run, from the parsed options to a finished run directory."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import tensorflow as tf
from sklearn.metrics import accuracy_score, f1_score

from core.args import DataArguments, RunArguments
from core.data import TaskData, load_task
from core.rundir import finish_run, start_run, write_run_json
from core.runtime import make_strategy, set_seed
from finetune.args import FinetuneArguments
from finetune.card import write_card
from finetune.checkpoint import Checkpoint, CheckpointError, resolve_checkpoint, tf_checkpoint
from finetune.pipeline import Encoded, encode, eval_dataset, steps_per_epoch, train_dataset
from finetune.predict import FinetunedClassifier
from finetune.train import TrainResult, build_model, count_params, fit

logger = logging.getLogger(__name__)


def train(data_args: DataArguments, run_args: RunArguments, args: FinetuneArguments) -> Path:
    """Fine-tunes `args.model` on the task and returns the finished run directory.

    Every check on the model, the data and the output directory runs before training starts.
    """
    from transformers import AutoConfig, AutoTokenizer

    set_seed(data_args.seed)
    checkpoint = resolve_checkpoint(args.model)
    config = AutoConfig.from_pretrained(checkpoint.directory)
    positions = getattr(config, "max_position_embeddings", None)
    if positions is not None and data_args.max_length > positions:
        raise CheckpointError(
            f"--max-length {data_args.max_length} exceeds the {positions} positions {args.model} was trained "
            f"with; pass --max-length {positions} or less."
        )
    tokenizer = AutoTokenizer.from_pretrained(checkpoint.directory)
    tf_checkpoint(checkpoint)  # converts PyTorch-only weights now, so a bad checkpoint fails before the data loads
    task = load_task(data_args)
    run_dir = start_run(run_args.output_dir, overwrite=run_args.overwrite, resume=run_args.resume)

    if args.mixed_precision:
        tf.keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        model, result, hyperparameters, truncated = _fit(
            task, checkpoint, tokenizer, data_args, run_args, args, run_dir
        )
    finally:
        tf.keras.mixed_precision.set_global_policy("float32")

    classifier = FinetunedClassifier(model, tokenizer, task.labels, data_args.max_length)
    validation = evaluate(classifier, task, "validation")
    logger.info("Validation: accuracy %.4f, macro-F1 %.4f", validation["accuracy"], validation["macro_f1"])

    model.save_pretrained(run_dir)
    tokenizer.save_pretrained(run_dir)
    shutil.rmtree(run_dir / "backup", ignore_errors=True)
    params, trainable = count_params(model)
    record = write_run_json(
        run_dir,
        {
            "side": "finetune",
            "model": {
                "name": args.model,
                "source": checkpoint.source,
                "architecture": type(model).__name__,
                "params": params,
                "trainable_params": trainable,
            },
            "data": task.describe(data_args),
            "hyperparameters": hyperparameters,
            "training": {
                "seconds": result.seconds,
                "epochs_run": result.epochs_run,
                "best_epoch": result.best_epoch,
                "history": result.history,
                "examples_per_second": result.examples_per_second,
                "truncated": truncated,
            },
            "validation": validation,
        },
    )
    write_card(run_dir, record)
    return finish_run(run_dir, run_args.output_dir)


def _fit(
    task: TaskData,
    checkpoint: Checkpoint,
    tokenizer,
    data_args: DataArguments,
    run_args: RunArguments,
    args: FinetuneArguments,
    run_dir: Path,
) -> tuple[tf.keras.Model, TrainResult, dict[str, Any], dict[str, int]]:
    encoded: dict[str, Encoded] = {}
    for split in ("train", "validation"):
        encoded[split] = encode(tokenizer, task.texts(split), data_args.max_length)
        if encoded[split].truncated:
            logger.warning(
                "%s: %d of %d texts are longer than --max-length %d tokens and were cut.",
                split,
                encoded[split].truncated,
                len(encoded[split].ids),
                data_args.max_length,
            )
    lengths = encoded["train"].lengths
    logger.info("Train texts: mean %.1f tokens, longest %d", lengths.mean(), lengths.max())

    strategy = make_strategy(run_args.strategy)
    pad_id = tokenizer.pad_token_id
    train = train_dataset(
        encoded["train"], task.label_ids("train"), args.batch_size, data_args.max_length, pad_id, data_args.seed
    )
    validation = eval_dataset(encoded["validation"], task.label_ids("validation"), args.batch_size * 2, pad_id)
    steps = steps_per_epoch(lengths, args.batch_size, data_args.max_length)
    with strategy.scope():
        model = build_model(checkpoint, task.labels, args, steps * args.epochs)
    result = fit(model, train, validation, run_dir, args, len(lengths))
    hyperparameters = {
        **{k: v for k, v in args.to_dict().items() if k != "model"},
        "max_length": data_args.max_length,
        "seed": data_args.seed,
        "steps_per_epoch": steps,
        "strategy": run_args.strategy,
        "replicas": strategy.num_replicas_in_sync,
    }
    truncated = {split: enc.truncated for split, enc in encoded.items()}
    return model, result, hyperparameters, truncated


def evaluate(classifier: FinetunedClassifier, task: TaskData, split: str) -> dict[str, float]:
    """Accuracy and macro-F1 of `classifier` on one split of the task."""
    gold = task.label_ids(split)
    predicted = classifier.predict_proba(task.texts(split)).argmax(axis=1)
    return {
        "accuracy": float(accuracy_score(gold, predicted)),
        "macro_f1": float(f1_score(gold, predicted, average="macro", labels=np.arange(len(task.labels)))),
    }
