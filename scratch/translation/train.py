"""Trains a translation model from scratch and writes a finished run directory.

The stages, in `train` order: load the shared parallel splits, train the joint SentencePiece vocabulary on
the train split, with `--teacher` replace the train targets by the teacher's translations
(`scratch.translation.teacher`), tokenise once (or, with `--subword-alpha`, draw new segmentations every epoch), batch pairs
of similar length by token count, fit with AdamW under the warmup / inverse-square-root schedule, score the
validation split after every epoch (chrF++ of greedy translations, or the validation loss), keep the best
epoch (or the average of the last epochs when it scores better), export `saved_model/`, write `run.json`.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import shutil
import time
from pathlib import Path

import numpy as np
import tensorflow as tf

from core.args import RunArguments
from core.callbacks import LOG_DIR
from core.pairs import PairData, PairDataArguments, load_pairs
from core.rundir import RunError, check_run_dir, partial_path, start_run, write_json
from core.runtime import is_chief, make_strategy, set_seed
from core.training_log import HISTORY_FILE, EpochScalars, append_history, read_history
from core.translator import read_translation_run, translate_batches
from scratch.schedule import WarmupInverseSqrt, transformer_adamw
from scratch.translation.args import TranslationArguments
from scratch.translation.batching import make_dataset, pair_lengths, sample_pairs, token_batches, tokenize_pairs
from scratch.translation.card import write_card
from scratch.translation.export import TranslationModule, save
from scratch.translation.model import TranslationConfig, TranslationModel, build_model
from scratch.translation.record import finish_translation_run, score, write_translation_run_json
from scratch.translation.teacher import check_teacher, teacher_targets
from scratch.translation.tokenizer import SubwordTokenizer, train_sentencepiece

logger = logging.getLogger(__name__)

TOKENIZER_FILE = "sentencepiece.model"
STATE_FILE = "state.json"
CHECKPOINT_DIR = "checkpoints"
WEIGHTS_DIR = "weights"  # the kept Keras weights, for Python-side use
WEIGHTS = "model"
RECENT_DIR = "recent"  # the last `--average-last` epochs' weights, averaged when training ends


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

    def epoch_pairs(epoch: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
        if train_pairs is not None:
            return train_pairs
        seed = data_args.seed * 100_003 + epoch
        return sample_pairs(proto, sources, targets, data_args.max_length, args.subword_alpha, seed)

    plan = step_plan(args, config.arch, epoch_pairs) if args.cooldown else {}

    validation = data.splits["validation"]
    validation_pairs = tokenize_pairs(tokenizer, validation.sources, validation.targets, data_args.max_length)
    logger.info("Vocabulary %d pieces; %d training pairs", tokenizer.vocab_size, len(sources))
    with strategy.scope():
        model = build_model(config)
        model.label_smoothing = args.label_smoothing
        model.compile(optimizer=make_optimizer(args, plan.get("total_steps", 0), plan.get("cooldown_steps", 0)))
    module = TranslationModule(model, proto, data_args.max_length, args.length_penalty)
    training = fit(
        model, module, epoch_pairs, validation_pairs, validation, args, data_args.seed, partial, run_args.resume
    )
    training["replicas"] = strategy.num_replicas_in_sync
    training["schedule"] = plan or None

    model.load_weights(str(partial / WEIGHTS_DIR / WEIGHTS))
    hypotheses = translate_batches(module, validation.sources, beam=args.beam)
    scores = score(hypotheses, validation.targets)
    evaluation = model.evaluate(
        make_dataset(config.arch, *validation_pairs, args.max_tokens)[0], return_dict=True, verbose=0
    )
    logger.info("Validation BLEU %.2f, chrF++ %.2f", scores["bleu"], scores["chrf"])
    save(module, partial)
    record = run_record(data, data_args, run_args, args, model, tokenizer, training, scores, evaluation)
    if distillation is not None:
        record["distillation"] = distillation
    write_card(partial, write_translation_run_json(partial, record))
    for leftover in (CHECKPOINT_DIR, STATE_FILE, RECENT_DIR):
        path = partial / leftover
        shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
    return finish_translation_run(partial, Path(run_args.output_dir), chief)


def load_trained(run_dir: str | Path) -> tuple[TranslationModel, SubwordTokenizer, dict]:
    """A finished run's Keras model (its kept weights), its tokenizer and its run.json, for Python-side use."""
    run_dir = Path(run_dir)
    record = read_translation_run(run_dir)
    model = build_model(TranslationConfig(**record["model"]["config"]))
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


def step_plan(args: TranslationArguments, arch: str, epoch_pairs) -> dict:
    """The steps training plans, `epochs` x the first epoch's batches cut at `--max-steps`, and how many of the
    last of them cool the learning rate down (`--cooldown` of them). Sampled segmentations (`--subword-alpha`)
    change the batch count a little from epoch to epoch; the first epoch's stands for all."""
    lengths = pair_lengths(arch, *epoch_pairs(1))
    steps_per_epoch = len(token_batches(lengths, args.max_tokens))
    total = (
        args.epochs * steps_per_epoch if args.max_steps is None else min(args.epochs * steps_per_epoch, args.max_steps)
    )
    return {"steps_per_epoch": steps_per_epoch, "total_steps": total, "cooldown_steps": round(args.cooldown * total)}


def make_optimizer(
    args: TranslationArguments, total_steps: int = 0, cooldown_steps: int = 0
) -> tf.keras.optimizers.Optimizer:
    """AdamW (beta_2 0.98, as the original Transformer) under the warmup / 1/sqrt(step) schedule, cooled down
    linearly to 0 over the last `cooldown_steps` of `total_steps` when those are given."""
    schedule = WarmupInverseSqrt(args.learning_rate, args.warmup_steps, total_steps, cooldown_steps)
    return transformer_adamw(schedule, args.weight_decay, args.clip_norm)


def fit(model, module, epoch_pairs, validation_pairs, validation, args, seed, partial, resume) -> dict:
    """The epoch loop: train, score validation, log the epoch (`history.jsonl` and TensorBoard, as the classifiers
    do), keep the best weights, checkpoint for `--resume`, stop early.

    `epoch_pairs(epoch)` gives the epoch's tokenised training pairs (the same every epoch unless sampled).
    """
    # Two kept, each named by its epoch: an interruption between saving epoch N's checkpoint and writing the state
    # that records epoch N leaves the state at N - 1 with its checkpoint still there.
    checkpoint = tf.train.CheckpointManager(
        tf.train.Checkpoint(model=model, optimizer=model.optimizer), str(partial / CHECKPOINT_DIR), max_to_keep=2
    )
    state = {"epoch": 0, "steps": 0, "best_epoch": None, "best_score": None, "stale": 0, "stop": None}
    if resume and (partial / STATE_FILE).is_file():
        state = json.loads((partial / STATE_FILE).read_text(encoding="utf-8"))
        saved = str(partial / CHECKPOINT_DIR / f"ckpt-{state['epoch']}")
        if not Path(saved + ".index").is_file():
            raise RunError(
                f"--resume: {partial} holds no checkpoint of epoch {state['epoch']}, the last one its state records; "
                "start again with --overwrite."
            )
        checkpoint.checkpoint.restore(saved).expect_partial()
        logger.info("Resuming after epoch %d (%d steps)", state["epoch"], state["steps"])
    # an epoch logged but not yet in the state is trained again, and its new line wins
    history = [row for row in read_history(partial / HISTORY_FILE) if row["epoch"] <= state["epoch"]]
    scalars = EpochScalars(partial / LOG_DIR)
    arch = model.config.arch
    validation_set, _ = make_dataset(arch, *validation_pairs, args.max_tokens)
    first = args.epochs + 1 if state["stop"] else state["epoch"] + 1  # a run that had stopped stays stopped
    for epoch in range(first, args.epochs + 1):
        if args.max_steps is not None and state["steps"] >= args.max_steps:  # resumed with a smaller budget
            state["stop"] = "budget"
            break
        started = time.perf_counter()  # sampled segmentations count as training time
        dataset, sizes = make_dataset(arch, *epoch_pairs(epoch), args.max_tokens, np.random.default_rng([seed, epoch]))
        steps = len(sizes) if args.max_steps is None else min(len(sizes), args.max_steps - state["steps"])
        trained = model.fit(dataset.take(steps), epochs=1, verbose=2).history
        seconds = time.perf_counter() - started
        scores, current = validation_scores(model, module, validation_set, validation, args.early_stopping)
        row = {
            "epoch": epoch,
            "loss": trained["loss"][0],
            "accuracy": trained["accuracy"][0],
            **scores,
            "train_seconds": seconds,
            "steps": steps,
            "pairs": sum(sizes[:steps]),
        }
        state["steps"] += steps
        state["epoch"] = epoch
        history.append(row)
        append_history(partial / HISTORY_FILE, row)
        scalars.write(epoch, {"loss": row["loss"], "accuracy": row["accuracy"]}, {k[4:]: v for k, v in scores.items()})
        logger.info("Epoch %d: %s", epoch, ", ".join(f"{k} {v:.4g}" for k, v in row.items() if k != "epoch"))
        if state["best_score"] is None or current > state["best_score"]:
            state.update(best_score=current, best_epoch=epoch, stale=0)
            model.save_weights(str(partial / WEIGHTS_DIR / WEIGHTS))
        else:
            state["stale"] += 1
        if state["stale"] >= args.patience:
            state["stop"] = "early_stopping"
        elif args.max_steps is not None and state["steps"] >= args.max_steps:
            state["stop"] = "budget"
        keep_recent(model, partial / RECENT_DIR, epoch, args.average_last)
        checkpoint.save(checkpoint_number=epoch)
        write_json(partial / STATE_FILE, state)
        if state["stop"]:
            break
    averaged = None
    if args.average_last > 1 and len(recent_epochs(partial / RECENT_DIR)) > 1:
        epochs = average_recent(model, partial / RECENT_DIR)
        scores, current = validation_scores(model, module, validation_set, validation, args.early_stopping)
        averaged = {"epochs": epochs, **scores, "kept": bool(current > state["best_score"])}
        logger.info("Average of epochs %s: %s", epochs, scores)
        if averaged["kept"]:
            model.save_weights(str(partial / WEIGHTS_DIR / WEIGHTS))
    seconds = sum(row["train_seconds"] for row in history)
    return {
        "seconds": seconds,
        "epochs_run": len(history),
        "best_epoch": state["best_epoch"],
        "steps": state["steps"],
        "history": history,
        "examples_per_second": sum(row["pairs"] for row in history) / seconds if seconds else 0.0,
        "stop_reason": state["stop"] or "max_epochs",
        "budget": {"max_steps": args.max_steps, "max_epochs": args.epochs},
        "early_stopping": "chrf++ of greedy validation translations" if args.early_stopping == "chrf" else "val_loss",
        "averaged": averaged,
    }


def validation_scores(model, module, validation_set, validation, early_stopping: str) -> tuple[dict, float]:
    """The current weights' validation loss and token accuracy (and chrF++ of greedy translations with `chrf`),
    and the early-stopping score (higher is better)."""
    evaluated = model.evaluate(validation_set, return_dict=True, verbose=0)
    scores = {"val_loss": evaluated["loss"], "val_accuracy": evaluated["accuracy"]}
    if early_stopping == "chrf":
        scores["val_chrf"] = score(translate_batches(module, validation.sources), validation.targets)["chrf"]
        return scores, scores["val_chrf"]
    return scores, -scores["val_loss"]


def recent_epochs(directory: Path) -> list[int]:
    """The epochs whose weights `keep_recent` holds in `directory`, oldest first."""
    return sorted(int(path.name[len("epoch-") : -len(".npz")]) for path in directory.glob("epoch-*.npz"))


def keep_recent(model: TranslationModel, directory: Path, epoch: int, count: int) -> None:
    """Saves this epoch's weights to `directory` and deletes all but the newest `count` (nothing when count < 2)."""
    if count < 2:
        return
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"epoch-{epoch:04d}.npz"
    unfinished = directory / f"epoch-{epoch:04d}.npz.partial"
    with open(unfinished, "wb") as f:
        np.savez(f, *model.get_weights())
    unfinished.replace(path)  # a crash mid-write leaves no file that would be averaged
    for old in recent_epochs(directory)[:-count]:
        (directory / f"epoch-{old:04d}.npz").unlink()


def average_recent(model: TranslationModel, directory: Path) -> list[int]:
    """Sets the model's weights to the element-wise mean of the kept epochs' weights; returns those epochs."""
    epochs = recent_epochs(directory)
    count = len(model.get_weights())
    snapshots = []
    for epoch in epochs:
        with np.load(directory / f"epoch-{epoch:04d}.npz") as saved:
            snapshots.append([saved[f"arr_{i}"] for i in range(count)])
    model.set_weights([np.mean(arrays, axis=0) for arrays in zip(*snapshots)])
    return epochs


def run_record(
    data, data_args, run_args, args, model: TranslationModel, tokenizer, training, scores, evaluation
) -> dict:
    """The run.json record: model, data, tokenizer, options, training history and validation scores."""
    params = int(sum(np.prod(w.shape) for w in model.weights))
    trainable = int(sum(np.prod(w.shape) for w in model.trainable_weights))
    return {
        "side": "scratch",
        "model": {
            "name": f"scratch-{model.config.arch}",
            "source": "trained from scratch",
            "arch": model.config.arch,
            "params": params,
            "trainable_params": trainable,
            "config": model.config.to_dict(),
        },
        "data": data.describe(data_args),
        "tokenizer": {"kind": "sentencepiece-unigram", "vocab_size": tokenizer.vocab_size, "file": TOKENIZER_FILE},
        "hyperparameters": {
            **dataclasses.asdict(args),
            "max_length": data_args.max_length,
            "seed": data_args.seed,
            "strategy": run_args.strategy,
        },
        "training": training,
        "validation": {
            "bleu": scores["bleu"],
            "chrf": scores["chrf"],
            "loss": evaluation["loss"],
            "token_accuracy": evaluation["accuracy"],
            "beam": args.beam,
            "signatures": scores["signatures"],
        },
    }
