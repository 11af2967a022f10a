"""One from-scratch run, from the parsed options to a finished run directory, in the order of transformers'
`run_text_classification.py`: options, data, model, compile, fit, save, record.

The stages: load the shared splits, build the tokenizer on train, tokenise once (a pair task's two texts as one
sequence `text [SEP] text_pair`), group texts of similar length into batches padded to their own length, compile
with AdamW under the warmup / inverse-square-root schedule and the kind's loss (`core.kinds`), fit with the shared
loop (`core.training.fit`), keeping the best validation epoch by the kind's watched score, choose a multi-label
run's thresholds on validation, save one end-to-end `.keras` model that takes raw strings, and write `run.json`
and the model card. With `--teacher` (`scratch.distill`), the teacher's run is checked against the data before the
run directory is made, the transfer set (train and its augmented copies, labelled by the teacher) replaces the
train split, and the distillation loss the kind's own.

The run directory (`docs/formats.md`): `model.keras`, `run.json`, the model card `README.md`, the training
log `history.jsonl` and TensorBoard `logs/`. run.json's `training` is the shared loop's (the same for every kind
of run) plus, with `--class-weight balanced`, `class_weights` (per label id); `hyperparameters` holds the options
with the planned `epochs`, `steps_per_epoch` and `total_steps`; `validation` holds the restored best epoch's
scores (`Kind.validation_scores`) and `thresholds` a multi-label run's decision thresholds.
"""

from __future__ import annotations

import dataclasses
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
from core.training.validation import ValidationOutputs, final_validation, row_order
from scratch import masked_lm
from scratch.args import ScratchArguments
from scratch.card import write_card
from scratch.distill.distillation import Distillation
from scratch.model import ModelConfig, build_classifier, build_end_to_end
from scratch.onnx import write_checked
from scratch.pipeline import grouped_batches, mean_length, predict_logits, steps_per_epoch, tokenize, training_rows
from scratch.pretraining import PretrainingArguments, check_pretraining, read_unlabeled, text_columns
from scratch.schedule import WarmupInverseSqrt, transformer_adamw
from scratch.tokenizer import make_tokenizer

logger = logging.getLogger(__name__)

MODEL_FILE = "model.keras"


def train(
    data_args: DataArguments,
    run_args: RunArguments,
    args: ScratchArguments,
    pretraining: PretrainingArguments | None = None,
) -> Path:
    """Trains the from-scratch Transformer on the task (with `--self-pretrain`, pretrains its encoder first:
    `scratch.pretraining`) and returns the finished run directory."""
    set_seed(data_args.seed)
    pretraining = pretraining if pretraining is not None and pretraining.self_pretrain else None

    # data, and the options checked against it before the run directory exists
    data = load_task(data_args)
    kind = data.kind
    kind.check_class_weight(args.class_weight)
    config = args.model_config(num_labels=data.num_outputs, problem_type=kind.name, pairs=data.has_pairs)
    if pretraining:
        check_pretraining(args, pretraining)
    unlabeled = []
    if pretraining and pretraining.unlabeled_file:
        unlabeled = read_unlabeled(pretraining.unlabeled_file, text_columns(data_args))
    distillation = Distillation.check(args, data) if args.teacher else None
    strategy = make_strategy(run_args.strategy)
    chief = is_chief(strategy)
    keep = {"data": dict(data.fingerprints), "model": dataclasses.asdict(config)}
    if pretraining:
        keep["pretraining"] = dataclasses.asdict(pretraining)
    partial = start_run(run_args.output_dir, run_args.overwrite, run_args.resume, chief, keep)

    # the tokenizer is built on every text the run learns from, the unlabelled ones included
    tokenizer = make_tokenizer(
        config.tokenizer,
        train_vocabulary_texts(data) + unlabeled,
        config.vocab_size,
        data_args.max_length,
        pairs=data.has_pairs,
        reading=data.reading,
    )
    if distillation:
        distillation.label(partial, data_args.seed)
        train_ids = tokenize(tokenizer, distillation.texts, distillation.text_pairs)
        train_targets = distillation.train_targets()
    else:
        train_ids, train_targets = training_rows(
            tokenizer, data.texts("train"), data.text_pairs("train"), data.targets("train"), data.reading
        )
    validation_ids = tokenize(tokenizer, data.texts("validation"), data.text_pairs("validation"))
    logger.info(
        "Vocabulary %d tokens; train inputs average %.1f tokens", len(tokenizer.vocabulary), mean_length(train_ids)
    )
    train_batches = grouped_batches(train_ids, train_targets, args.batch_size, data_args.max_length, data_args.seed)
    validation_batches = grouped_batches(
        validation_ids, data.targets("validation"), args.batch_size, data_args.max_length
    )
    indexed = grouped_batches(validation_ids, np.arange(len(validation_ids)), args.batch_size, data_args.max_length)
    validating = ValidationOutputs(validation_batches, kind, row_order(indexed))
    pass_steps = steps_per_epoch(train_ids, args.batch_size, data_args.max_length)
    args = args.per_pass(pass_steps)  # bounds in passes as steps, recorded so
    plan = args.plan(pass_steps)
    warmup_steps = args.warmup(plan.total_steps)

    # model (pretrained first with --self-pretrain; its table has a row for the mask id) and compile
    with strategy.scope():
        classifier = build_classifier(
            config, len(tokenizer.vocabulary) + (1 if pretraining else 0), tokenizer.separator_id
        )
        if pretraining:
            corpus = train_ids + tokenize(tokenizer, unlabeled)
            pretrained = masked_lm.pretrain(
                classifier, config, tokenizer, corpus, validation_ids, partial, args, pretraining, data_args.seed
            )
            pretrained.update(
                texts=len(corpus),
                unlabeled_file=pretraining.unlabeled_file,
                unlabeled_rows=len(unlabeled) if pretraining.unlabeled_file else None,
            )
        compiled = distillation.compiled() if distillation else {}
        compile_classifier(classifier, args, warmup_steps, kind, **compiled)

    # fit
    training_config = TrainingConfig.for_classifier(args, plan, kind, train_targets, len(data.labels))
    training = fit(classifier, train_batches, validation_batches, partial, training_config, callbacks=[validating])

    # the kept weights on validation, as training validated them: calibration, the thresholds a multi-label run
    # decides by, and the scores
    final = final_validation(
        kind,
        data.targets("validation"),
        validating.kept,
        lambda: kind.activate(predict_logits(classifier, validation_ids, args.batch_size)).numpy(),
    )

    # save
    end_to_end = build_end_to_end(tokenizer, classifier, kind, pairs=data.has_pairs)
    end_to_end.save(partial / MODEL_FILE)
    if args.onnx:
        serving = write_checked(end_to_end, data, final.thresholds, partial, reference=final.outputs)
    else:
        serving = {"runtime": "tensorflow", "note": "trained with --no-onnx"}

    # record
    context = RunContext(
        side="scratch",
        model=classifier,
        model_fields=model_fields(
            config, len(tokenizer.vocabulary), data_args.max_length, pretrained=bool(pretraining)
        ),
        data=data.describe(data_args),
        options={  # with the warmup the ratio gave
            **dataclasses.replace(args, warmup_steps=warmup_steps).to_dict(),
            "optimizer": "AdamW",
            "schedule": "warmup then 1/sqrt(step)",
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
        sections={
            "serving": serving,
            **({"distillation": distillation.record()} if distillation else {}),
            **({"pretraining": pretrained} if pretraining else {}),
        },
    )
    write_card(partial, write_run(partial, run_record(context)))
    remove_training_state(partial)
    masked_lm.remove_pretraining_state(partial)
    return finish_run(partial, run_args.output_dir, chief=chief)


def compile_classifier(
    classifier: tf.keras.Model,
    args: ScratchArguments,
    warmup_steps: int,
    kind: Kind,
    loss: tf.keras.losses.Loss | None = None,
    metrics: list[tf.keras.metrics.Metric] | None = None,
) -> None:
    """AdamW under the warmup / inverse-square-root schedule, clipped gradients, and the kind's loss (`Kind.loss`,
    smoothed by `--label-smoothing` where the kind's labels are exclusive) and metrics. `loss` and `metrics` replace
    them (a distilled run's)."""
    logger.info("AdamW: peak learning rate %g after %d warmup steps", args.learning_rate, warmup_steps)
    optimizer = transformer_adamw(
        WarmupInverseSqrt(args.learning_rate, warmup_steps), args.weight_decay, args.clip_norm
    )
    smoothing = args.label_smoothing if kind.smooths_labels else 0.0
    classifier.compile(
        optimizer=optimizer,
        loss=loss or kind.loss(smoothing),
        metrics=kind.metrics(classifier.output_shape[-1]) if metrics is None else metrics,
    )


def train_vocabulary_texts(data: TaskData) -> list[str]:
    """The texts a word vocabulary is adapted on: train's texts, and for a pair task its second texts too."""
    return data.texts("train") + (data.text_pairs("train") or [])


def model_fields(config: ModelConfig, vocab_size: int, max_length: int, pretrained: bool = False) -> dict:
    """run.json `model`'s description of the network: its name, source, file and configuration (`pretrained`: the
    encoder was self-pretrained first)."""
    norm = "pre-LN" if config.norm == "pre" else "post-LN"
    network = "causal decoder" if config.causal else "encoder"
    source = "random initialisation (trained from scratch)"
    if pretrained:
        source = "random initialisation, self-pretrained with masked language modelling on the run's own texts"
    return {
        "name": f"Transformer {network}, {config.num_layers} layers, d_model {config.d_model}, "
        f"{config.num_heads} heads, {norm}, {config.tokenizer} tokens",
        "source": source,
        "file": MODEL_FILE,
        "config": {**config.to_dict(), "tokenizer_vocab_size": vocab_size, "max_length": max_length},
    }
