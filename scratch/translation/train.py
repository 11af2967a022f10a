"""Trains a translation model from scratch and writes a finished run directory.

The stages, in `train` order: load the shared parallel splits, train the joint SentencePiece vocabulary on
the train split, with `--teacher` replace the train targets by the teacher's translations
(`scratch.translation.teacher`), tokenise once (or, with `--subword-alpha`, draw new segmentations every pass),
stream batches of pairs of similar length by token count (`TokenBatchStream`), and fit with AdamW under the
warmup / inverse-square-root schedule through `core.training.fit`, as the classifiers train: validation after
every epoch (or every `--eval-steps`), scored by chrF++ of greedy translations (or the validation loss), early
stopping with the best epoch's weights (or the average of the last epochs when it scores better), `--resume`
through the backup. Then export `saved_model/` and write `run.json`.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

import numpy as np
import tensorflow as tf

from core.args import RunArguments
from core.pairs import PairData, PairDataArguments, load_pairs
from core.record import RunContext, RunRecord, run_record, write_run
from core.rundir import check_run_dir, finish_run, partial_path, start_run
from core.runtime import is_chief, make_strategy, set_seed
from core.task_kinds import TRANSLATION
from core.training import TrainingConfig, fit, remove_training_state
from core.training.callbacks import ValidationScore
from core.translator import read_translation_run, translate_batches
from scratch.schedule import WarmupInverseSqrt, transformer_adamw
from scratch.translation.args import TranslationArguments
from scratch.translation.batching import TokenBatchStream, evaluation_dataset, sample_pairs, tokenize_pairs
from scratch.translation.card import write_card
from scratch.translation.export import TranslationModule, save
from scratch.translation.model import TranslationConfig, TranslationModel, build_model
from scratch.translation.scores import score
from scratch.translation.teacher import check_teacher, teacher_targets
from scratch.translation.tokenizer import SubwordTokenizer, train_sentencepiece

logger = logging.getLogger(__name__)

TOKENIZER_FILE = "sentencepiece.model"
WEIGHTS_DIR = "weights"  # the kept Keras weights, for Python-side use
WEIGHTS = "model"


def train(data_args: PairDataArguments, run_args: RunArguments, args: TranslationArguments) -> Path:
    set_seed(data_args.seed)
    strategy = make_strategy(run_args.strategy)  # before any other TensorFlow op: multiworker needs it first
    if is_chief(strategy):
        check_run_dir(run_args.output_dir, run_args.overwrite, run_args.resume)  # before the vocabulary is trained
    data = load_pairs(data_args)
    distillation = check_teacher(args.teacher, args.teacher_beam, data, data_args) if args.teacher else None
    proto = _tokenizer_proto(data, args, run_args)
    tokenizer = SubwordTokenizer(proto)
    data.count_cut(lambda texts: tokenizer.tokenize(tf.constant(texts)).row_lengths().numpy(), data_args.max_length)
    config = args.model_config(vocab_size=tokenizer.vocab_size)
    chief = is_chief(strategy)  # the other workers of `multiworker` train alike but write a temporary directory
    keep = {"data": dict(data.fingerprints), "model": dataclasses.asdict(config)}
    partial = start_run(run_args.output_dir, run_args.overwrite, run_args.resume, chief, keep)
    (partial / TOKENIZER_FILE).write_bytes(proto)

    sources, targets = data.splits["train"].sources, data.splits["train"].targets
    if distillation is not None:  # the vocabulary stays the train split's own
        sources, targets, counts = teacher_targets(args.teacher, args.teacher_beam, sources, partial)
        distillation.update(counts)
    train_pairs = None if args.subword_alpha else tokenize_pairs(tokenizer, sources, targets, data_args.max_length)

    def pass_pairs(number: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
        if train_pairs is not None:
            return train_pairs
        seed = data_args.seed * 100_003 + number
        return sample_pairs(proto, sources, targets, data_args.max_length, args.subword_alpha, seed)

    stream = TokenBatchStream(config.arch, pass_pairs, args.max_tokens, data_args.seed)
    args = args.per_pass(stream.steps_per_pass)  # bounds in passes as steps, recorded so
    plan = args.plan(stream.steps_per_pass)  # sampled segmentations (`--subword-alpha`): the first pass stands for all
    cooldown_steps = round(args.cooldown * plan.total_steps)
    validation = data.splits["validation"]
    validation_pairs = tokenize_pairs(tokenizer, validation.sources, validation.targets, data_args.max_length)
    validation_set = evaluation_dataset(config.arch, *validation_pairs, args.max_tokens)
    logger.info("Vocabulary %d pieces; %d training pairs", tokenizer.vocab_size, len(sources))
    with strategy.scope():
        model = build_model(config, label_smoothing=args.label_smoothing)
        model.compile(optimizer=make_optimizer(args, plan.total_steps, cooldown_steps))
    module = TranslationModule(model, proto, data_args.max_length, args.length_penalty)
    chrf = ValidationScore("val_chrf", lambda: validation_chrf(module, validation.sources, validation.targets))
    monitor, mode = ("val_chrf", "max") if args.early_stopping == "chrf" else ("val_loss", "min")
    training_config = TrainingConfig.from_arguments(args, plan, stream.examples, monitor, mode, args.average_last)
    callbacks = [stream, *([chrf] if monitor == "val_chrf" else [])]
    training = fit(model, stream.dataset(), validation_set, partial, training_config, callbacks=callbacks)
    model.save_weights(str(partial / WEIGHTS_DIR / WEIGHTS))  # the best epoch's, or the kept average
    hypotheses = translate_batches(module, validation.sources, beam=args.beam)
    scores = score(hypotheses, validation.targets)
    evaluation = model.evaluate(validation_set, return_dict=True, verbose=0)
    logger.info("Validation BLEU %.2f, chrF++ %.2f", scores["bleu"], scores["chrf"])
    save(module, partial)
    context = RunContext(
        side="scratch",
        task=TRANSLATION,
        model=model,
        model_fields={
            "name": f"scratch-{config.arch}",
            "source": "trained from scratch",
            "arch": config.arch,
            "config": config.to_dict(),
        },
        data=data.describe(data_args),
        options={
            **args.to_dict(),
            "cooldown_steps": cooldown_steps,
            "max_length": data_args.max_length,
            "seed": data_args.seed,
        },
        run_args=run_args,
        plan=plan,
        replicas=strategy.num_replicas_in_sync,
        training=training,
        validation={
            "bleu": scores["bleu"],
            "chrf": scores["chrf"],
            "loss": evaluation["loss"],
            "token_accuracy": evaluation["accuracy"],
            "beam": args.beam,
            "signatures": scores["signatures"],
        },
        sections={
            "tokenizer": {"kind": "sentencepiece-unigram", "vocab_size": tokenizer.vocab_size, "file": TOKENIZER_FILE},
            **({"distillation": distillation} if distillation is not None else {}),
        },
    )
    write_card(partial, write_run(partial, run_record(context)))
    remove_training_state(partial)
    return finish_run(partial, run_args.output_dir, chief)


def load_trained(run_dir: str | Path) -> tuple[TranslationModel, SubwordTokenizer, RunRecord]:
    """A finished run's Keras model (its kept weights), its tokenizer and its record, for Python-side use."""
    run_dir = Path(run_dir)
    record = read_translation_run(run_dir)
    model = build_model(TranslationConfig(**record.model.config))
    model.load_weights(str(run_dir / WEIGHTS_DIR / WEIGHTS)).expect_partial()
    return model, SubwordTokenizer((run_dir / TOKENIZER_FILE).read_bytes()), record


def _tokenizer_proto(data: PairData, args: TranslationArguments, run_args: RunArguments) -> bytes:
    """The SentencePiece model: the unfinished run's when resuming, else trained on both sides of train."""
    saved = partial_path(run_args.output_dir) / TOKENIZER_FILE
    if run_args.resume and saved.is_file():
        return saved.read_bytes()
    train = data.splits["train"]
    texts = train.sources + train.targets
    return train_sentencepiece(texts, args.model_config().vocab_size, grow=args.vocab_size is None)


def validation_chrf(module: TranslationModule, sources: list[str], references: list[str]) -> float:
    """chrF++ of the greedy translations of `sources`: the score early stopping watches with `--early-stopping chrf`."""
    return score(translate_batches(module, sources), references)["chrf"]


def make_optimizer(
    args: TranslationArguments, total_steps: int = 0, cooldown_steps: int = 0
) -> tf.keras.optimizers.Optimizer:
    """AdamW (beta_2 0.98, as the original Transformer) under the warmup / 1/sqrt(step) schedule, cooled down
    linearly to 0 over the last `cooldown_steps` of `total_steps` when those are given."""
    schedule = WarmupInverseSqrt(args.learning_rate, args.warmup_steps, total_steps, cooldown_steps)
    return transformer_adamw(schedule, args.weight_decay, args.clip_norm)
