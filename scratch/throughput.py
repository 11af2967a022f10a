"""`python -m scratch.throughput <data options> [scratch options]`: training speed of the real pipeline.

Builds the tokenizer, the model and the length-grouped batches exactly as `python -m scratch` does, times
them against the same batches padded to `--max-length` (see `core.throughput`), times the tokenizer
on the whole train split, and prints one JSON object for `compare bench`.
"""

from __future__ import annotations

import logging
import sys

import numpy as np
import tensorflow as tf

from core import throughput
from core.args import DataArguments
from core.data import load_task
from core.runtime import set_seed
from core.throughput import ThroughputArguments, measure_training, throughput_main, throughput_result, time_tokenizer
from scratch.args import ScratchArguments
from scratch.embedding import PAD_ID
from scratch.model import ModelConfig, build_classifier
from scratch.pipeline import grouped_batches, steps_per_epoch, tokenize
from scratch.tokenizer import make_tokenizer
from scratch.train import compile_classifier, train_vocabulary_texts

logger = logging.getLogger(__name__)


def pad_batch(batch, max_length: int):
    """A batch of the real pipeline padded to `max_length` positions: what the usual recipe feeds."""
    ids, targets = batch
    return tf.pad(
        ids, [[0, 0], [0, max_length - int(ids.shape[1])]], constant_values=PAD_ID
    ), targets  # (B, max_length)


def real_lengths(batch) -> np.ndarray:
    return (batch[0].numpy() != PAD_ID).sum(axis=1)  # (B,)


def model_shape(config: ModelConfig, classifier: tf.keras.Model) -> dict:
    """What the FLOP count needs: mean (or last-token) pooling has no pooler dense layer."""
    params = int(classifier.count_params())
    return throughput.model_shape(config.num_layers, config.d_model, config.d_ff, config.num_labels, False, params)


def measure(data_args: DataArguments, args: ScratchArguments, bench: ThroughputArguments) -> dict:
    set_seed(data_args.seed)
    task = load_task(data_args)
    config = args.model_config(num_labels=task.num_outputs, problem_type=task.problem_type, pairs=task.has_pairs)
    texts, pairs = task.texts("train"), task.text_pairs("train")
    tokenizer = make_tokenizer(
        config.tokenizer, train_vocabulary_texts(task), config.vocab_size, data_args.max_length, pairs=task.has_pairs
    )
    # each call tokenises a first stretch of the texts, with their second texts for a pair task
    timed = time_tokenizer(lambda batch: tokenize(tokenizer, batch, pairs and pairs[: len(batch)]), texts)
    ids = tokenize(tokenizer, texts, pairs)
    dataset = grouped_batches(ids, task.targets("train"), args.batch_size, data_args.max_length, data_args.seed)
    batches = list(dataset.repeat().take(bench.batches_needed))  # later epochs when the split is small
    classifier = build_classifier(config, len(tokenizer.vocabulary), tokenizer.separator_id)
    plan = args.plan(steps_per_epoch(ids, args.batch_size, data_args.max_length))
    compile_classifier(classifier, args, args.warmup(plan.total_steps), task.kind)
    logger.info("Timing %d rounds of %d steps of batch %d", bench.rounds, bench.steps, args.batch_size)
    timing = measure_training(
        classifier, batches, dataset.element_spec, lambda b: pad_batch(b, data_args.max_length), real_lengths, bench
    )
    name, shape = f"{args.preset} preset", model_shape(config, classifier)
    return throughput_result("scratch", name, shape, args.batch_size, data_args.max_length, len(texts), timed, timing)


def main(argv: list[str] | None = None) -> int:
    return throughput_main(argv, ScratchArguments, measure)


if __name__ == "__main__":
    sys.exit(main())
