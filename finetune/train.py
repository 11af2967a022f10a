"""One fine-tuning run, from the parsed options to a finished run directory, in the order of transformers'
`run_text_classification.py`: options, data, model, compile, fit, save, record.

Every kind of task trains here (`core.kinds`): single-label, multi-label and regression, on single texts or on text
pairs, through `TFAutoModelForSequenceClassification` with the kind's `num_outputs` and transformers' `problem_type`
in its config, so that the saved run loads with `from_pretrained`. The model is compiled with warmup + AdamW and
the kind's loss and metrics, and trained by the shared loop (`core.training.fit`): progress lines, the run's
`history.jsonl` training log, TensorBoard logs, early stopping on the kind's watched validation score
(`val_accuracy`, `val_macro_f1`, `val_spearman`) with the best weights restored, and `BackupAndRestore` into the
unfinished run directory, so `--resume` continues after an interruption.

The run directory (`docs/formats.md`): the `save_pretrained` model and tokenizer, `run.json`, the model
card `README.md`, the training log `history.jsonl` and TensorBoard `logs/`. run.json's `training` is the shared
loop's (the same for every kind of run) plus `truncated` (texts cut per split) and, with `--class-weight balanced`,
`class_weights` (per label id); `hyperparameters` holds the options with the planned `epochs`, `steps_per_epoch`
and `total_steps`; `validation` holds the restored best epoch's scores of the task's kind and `thresholds` a
multi-label run's decision thresholds, chosen on validation (`Kind.choose_thresholds`).
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import tensorflow as tf

from core.args import DataArguments, RunArguments
from core.data import TaskData, load_task
from core.kinds import Kind
from core.record import RunContext, run_record, write_run
from core.rundir import finish_run, start_run
from core.runtime import is_chief, make_strategy, set_seed
from core.training import TrainingConfig, fit, remove_training_state
from core.training.schedule import LinearWarmupDecay
from core.training.validation import ValidationOutputs, final_validation, row_order
from finetune.args import FinetuneArguments
from finetune.card import write_card
from finetune.checkpoint import Checkpoint, CheckpointError, load_for_task, resolve_checkpoint, tf_checkpoint
from finetune.onnx import write_checked
from finetune.pipeline import Encoded, encode, eval_dataset, steps_per_epoch, train_dataset
from finetune.predict import FinetunedClassifier

logger = logging.getLogger(__name__)


def train(data_args: DataArguments, run_args: RunArguments, args: FinetuneArguments) -> Path:
    """Fine-tunes `args.model` on the task and returns the finished run directory.

    Every check on the model, the data and the output directory runs before training starts.
    """
    from transformers import AutoTokenizer

    # options: the checkpoint, checked before anything loads
    checkpoint = resolve_checkpoint(args.model)
    check_max_length(checkpoint, data_args.max_length, args.model)
    tokenizer = AutoTokenizer.from_pretrained(checkpoint.directory)
    tf_checkpoint(checkpoint)  # converts PyTorch-only weights now, so a bad checkpoint fails before the data loads
    # Seeded after the conversion, whose model building draws random numbers: a run that converts the checkpoint
    # and one that finds it cached start from the same head
    # (docs/results.md, "One training loop: the same seed gives the same runs").
    set_seed(data_args.seed)

    # data
    task = load_task(data_args)
    kind = task.kind
    kind.check_class_weight(args.class_weight)  # before the run directory exists
    if args.focal_gamma:
        kind.focal_loss(args.focal_gamma)
    strategy = make_strategy(run_args.strategy)
    chief = is_chief(strategy)
    keep = {"data": dict(task.fingerprints), "model": {"model": str(args.model), "pooling": args.pooling}}
    run_dir = start_run(run_args.output_dir, run_args.overwrite, run_args.resume, chief, keep)

    if args.mixed_precision:
        tf.keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        encoded = encode_splits(task, tokenizer, data_args.max_length)
        targets = {split: task.targets(split) for split in encoded}
        pad_id = tokenizer.pad_token_id
        train_batches = train_dataset(
            encoded["train"], targets["train"], args.batch_size, data_args.max_length, pad_id, data_args.seed
        )
        validation_batches = eval_dataset(encoded["validation"], targets["validation"], args.batch_size * 2, pad_id)
        indexed = eval_dataset(
            encoded["validation"], np.arange(len(targets["validation"])), args.batch_size * 2, pad_id
        )
        validating = ValidationOutputs(validation_batches, kind, row_order(indexed))
        pass_steps = steps_per_epoch(encoded["train"].lengths, args.batch_size, data_args.max_length)
        args = args.per_pass(pass_steps)  # bounds in passes as steps, recorded so
        plan = args.plan(pass_steps)

        # model and compile
        with strategy.scope():
            model = build_model(checkpoint, task.labels, args, plan.total_steps, kind)

        # fit
        config = TrainingConfig.for_classifier(args, plan, kind, targets["train"], len(task.labels))
        training = fit(model, train_batches, validation_batches, run_dir, config, callbacks=[validating])
        training["truncated"] = {split: enc.truncated for split, enc in encoded.items()}
    finally:
        tf.keras.mixed_precision.set_global_policy("float32")

    # the kept weights on validation, as training validated them: calibration, the thresholds a multi-label run
    # decides by, and the scores
    task_fields = {"kind": kind, "labels": task.labels, "has_pairs": task.has_pairs}
    texts, pairs = task.texts("validation"), task.text_pairs("validation")
    # under --train-chunks training validated windows; the figures are the documents', pooled in one more pass
    windowed = encoded["validation"].documents is not None
    final = final_validation(
        kind,
        targets["validation"],
        None if windowed else validating.kept,
        lambda: FinetunedClassifier(model, tokenizer, data_args.max_length, **task_fields).outputs(texts, pairs),
    )
    classifier = FinetunedClassifier(
        model,
        tokenizer,
        data_args.max_length,
        **task_fields,
        thresholds=final.thresholds,
        temperatures=final.temperatures,
    )

    # save
    model.save_pretrained(run_dir)
    tokenizer.save_pretrained(run_dir)
    if args.onnx:
        serving = write_checked(classifier, texts, pairs, final.outputs, run_dir)
    else:
        serving = {"runtime": "tensorflow", "note": "trained with --no-onnx"}
    remove_training_state(run_dir)

    # record
    context = RunContext(
        side="finetune",
        model=model,
        model_fields={"name": args.model, "source": checkpoint.source, "architecture": type(model).__name__},
        data=task.describe(data_args),
        options={  # --model is model.name
            **{k: v for k, v in args.to_dict().items() if k != "model"},
            "max_length": data_args.max_length,
            "seed": data_args.seed,
        },
        run_args=run_args,
        plan=plan,
        replicas=strategy.num_replicas_in_sync,
        training=training,
        validation=final.scores,
        thresholds=final.thresholds,
        calibration=final.calibration,
        sections={"serving": serving},
    )
    write_card(run_dir, write_run(run_dir, run_record(context)))
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


def encode_splits(task: TaskData, tokenizer, max_length: int) -> dict[str, Encoded]:
    """The train and validation texts (pairs) as token ids, cut at `max_length` (the cuts logged)."""
    encoded: dict[str, Encoded] = {}
    for split in ("train", "validation"):
        windows = task.reading.train_chunks  # --train-chunks: each window a row, validated as it is trained
        encoded[split] = encode(tokenizer, task.texts(split), max_length, task.text_pairs(split), task.reading, windows)
        if encoded[split].truncated:
            logger.warning(
                "%s: %d of %d %s are longer than --max-length %d tokens and were cut.",
                split,
                encoded[split].truncated,
                len(encoded[split].ids),
                "text pairs" if task.has_pairs else "texts",
                max_length,
            )
    lengths = encoded["train"].lengths
    logger.info("Train texts: mean %.1f tokens, longest %d", lengths.mean(), lengths.max())
    return encoded


def build_model(
    checkpoint: Checkpoint, labels: list[str], args: FinetuneArguments, total_steps: int, kind: Kind
) -> tf.keras.Model:
    """The model for `labels` and `kind`, compiled with AdamW (decoupled weight decay, linear warmup then linear
    decay) and the kind's loss (focal with `--focal-gamma`) and metrics on its logits.

    Call inside the distribution strategy's scope.
    """
    from transformers import AdamWeightDecay

    model = load_for_task(checkpoint, labels, args.pooling, kind)
    schedule = LinearWarmupDecay(args.learning_rate, args.warmup_ratio, total_steps)
    optimizer = AdamWeightDecay(  # as transformers' `create_optimizer` builds it, under a schedule the clock can end
        learning_rate=schedule,
        weight_decay_rate=args.weight_decay,
        epsilon=1e-8,
        exclude_from_weight_decay=["LayerNorm", "layer_norm", "bias"],
    )
    logger.info(
        "AdamW: peak learning rate %g, %d steps, %d of them warmup%s",
        args.learning_rate,
        total_steps,
        schedule.warmup(total_steps),
        "; the clock may end the decay sooner" if args.time_budget is not None else "",
    )
    loss = kind.focal_loss(args.focal_gamma) if args.focal_gamma else kind.loss()
    model.compile(optimizer=optimizer, loss=loss, metrics=kind.metrics(model.config.num_labels))
    return model
