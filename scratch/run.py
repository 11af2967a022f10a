"""One from-scratch run, from the parsed options to a finished run directory.

The stages: load the shared splits, build the tokenizer on train, tokenise once, group texts of similar
length into batches padded to their own length, fit with AdamW under the warmup / inverse-square-root
schedule, keep the best validation epoch, save one end-to-end `.keras` model that takes raw strings, and
write `run.json` and the model card. With `--teacher` (`scratch.distill`), the teacher's run is checked against
the data before the run directory is made, the transfer set (train and its augmented copies, labelled by the
teacher) replaces the train split, and the distillation loss the cross-entropy.

The run directory (`docs/formats.md`): `model.keras`, `run.json`, the model card `README.md`, the training
log `history.jsonl` and TensorBoard `logs/`. run.json's `training` is the shared loop's (`core.callbacks.fit`,
the same for every kind of run) plus, with `--class-weight balanced`, `class_weights` (per label id);
`hyperparameters` holds the options with the planned `epochs`, `steps_per_epoch` and `total_steps`;
`validation` holds accuracy and macro-F1 of the restored best epoch (`core.metrics`).
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

import numpy as np

from core.args import DataArguments, RunArguments
from core.callbacks import fit_classifier, remove_training_state
from core.data import TaskData, load_task
from core.metrics import classification_scores
from core.record import RunContext, run_record
from core.rundir import finish_run, start_run, write_run_json
from core.runtime import is_chief, make_strategy, set_seed
from scratch.args import ScratchArguments
from scratch.card import write_card
from scratch.distill.distillation import Distillation
from scratch.model import ModelConfig, build_classifier, build_end_to_end
from scratch.onnx import write_checked
from scratch.pipeline import grouped_batches, mean_length, predict_logits, steps_per_epoch, tokenize
from scratch.tokenizer import make_tokenizer
from scratch.train import compile_classifier

logger = logging.getLogger(__name__)

MODEL_FILE = "model.keras"


def train(data_args: DataArguments, run_args: RunArguments, args: ScratchArguments) -> Path:
    """Trains the from-scratch Transformer on the task and returns the finished run directory."""
    set_seed(data_args.seed)
    data = load_task(data_args)
    config = args.model_config(num_labels=len(data.labels))
    distillation = Distillation.check(args, data) if args.teacher else None  # before the run directory exists
    strategy = make_strategy(run_args.strategy)
    chief = is_chief(strategy)
    keep = {"data": dict(data.fingerprints), "model": dataclasses.asdict(config)}
    partial = start_run(run_args.output_dir, run_args.overwrite, run_args.resume, chief, keep)

    tokenizer = make_tokenizer(config.tokenizer, data.texts("train"), config.vocab_size, data_args.max_length)
    if distillation:
        distillation.label(partial, data_args.seed)
    train_texts = distillation.texts if distillation else data.texts("train")
    train_ids, validation_ids = tokenize(tokenizer, train_texts), tokenize(tokenizer, data.texts("validation"))
    logger.info(
        "Vocabulary %d tokens; train texts average %.1f tokens", len(tokenizer.vocabulary), mean_length(train_ids)
    )
    if distillation:
        train_targets, validation_targets = distillation.train_targets(), distillation.validation_targets()
    else:
        train_targets, validation_targets = one_hot(data, "train"), one_hot(data, "validation")
    train_batches = grouped_batches(train_ids, train_targets, args.batch_size, data_args.max_length, data_args.seed)
    validation_batches = grouped_batches(validation_ids, validation_targets, args.batch_size, data_args.max_length)
    plan = args.plan(steps_per_epoch(train_ids, args.batch_size, data_args.max_length))
    warmup_steps = args.warmup(plan.total_steps)
    with strategy.scope():
        classifier = build_classifier(config, vocab_size=len(tokenizer.vocabulary))
        if distillation:
            compile_classifier(classifier, args, warmup_steps, distillation.loss(), distillation.metric())
        else:
            compile_classifier(classifier, args, warmup_steps)
    labels = distillation.transfer.gold if distillation else data.label_ids("train")
    training = fit_classifier(
        classifier, train_batches, validation_batches, partial, args, plan, labels, len(data.labels)
    )

    predicted = predict_logits(classifier, validation_ids, args.batch_size).argmax(axis=1)
    validation = classification_scores(data.label_ids("validation"), predicted, len(data.labels))
    logger.info("Validation accuracy %.4f, macro F1 %.4f", validation["accuracy"], validation["macro_f1"])
    end_to_end = build_end_to_end(tokenizer, classifier)
    end_to_end.save(partial / MODEL_FILE)
    if args.onnx:
        serving = write_checked(end_to_end, data.labels, data.texts("validation"), partial)
    else:
        serving = {"runtime": "tensorflow", "note": "trained with --no-onnx"}
    context = RunContext(
        side="scratch",
        model=classifier,
        model_fields=model_fields(config, len(tokenizer.vocabulary), data_args.max_length),
        data=data,
        data_args=data_args,
        run_args=run_args,
        options={  # with the warmup the ratio gave
            **dataclasses.replace(args, warmup_steps=warmup_steps).to_dict(),
            "optimizer": "AdamW",
            "schedule": "warmup then 1/sqrt(step)",
        },
        plan=plan,
        replicas=strategy.num_replicas_in_sync,
        training=training,
        validation=validation,
        sections={"serving": serving, **({"distillation": distillation.record()} if distillation else {})},
    )
    record = run_record(context)
    write_card(partial, write_run_json(partial, record))
    remove_training_state(partial)
    return finish_run(partial, run_args.output_dir, chief=chief)


def one_hot(data: TaskData, split: str) -> np.ndarray:
    """The split's gold labels as one-hot targets (n, K)."""
    return np.eye(len(data.labels), dtype=np.float32)[data.label_ids(split)]


def model_fields(config: ModelConfig, vocab_size: int, max_length: int) -> dict:
    """run.json `model`'s description of the network: its name, source, file and configuration."""
    norm = "pre-LN" if config.norm == "pre" else "post-LN"
    kind = "causal decoder" if config.causal else "encoder"
    return {
        "name": f"Transformer {kind}, {config.num_layers} layers, d_model {config.d_model}, "
        f"{config.num_heads} heads, {norm}, {config.tokenizer} tokens",
        "source": "random initialisation (trained from scratch)",
        "file": MODEL_FILE,
        "config": {**config.to_dict(), "tokenizer_vocab_size": vocab_size, "max_length": max_length},
    }
