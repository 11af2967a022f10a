"""`python -m finetune.throughput <data options> [finetune options]`: training speed of the real pipeline.

Builds the fine-tuning model and the length-grouped batches exactly as `python -m finetune` does, times
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
from finetune.args import FinetuneArguments
from finetune.checkpoint import resolve_checkpoint
from finetune.pipeline import encode, steps_per_epoch, train_dataset
from finetune.train import build_model

logger = logging.getLogger(__name__)


def pad_batch(batch, max_length: int, pad_id: int):
    """A batch of the real pipeline padded to `max_length` positions: what the usual recipe feeds."""
    features, labels = batch
    extra = [[0, 0], [0, max_length - int(features["input_ids"].shape[1])]]
    return {
        "input_ids": tf.pad(features["input_ids"], extra, constant_values=pad_id),  # (B, max_length)
        "attention_mask": tf.pad(features["attention_mask"], extra),  # (B, max_length)
    }, labels


def real_lengths(batch) -> np.ndarray:
    return batch[0]["attention_mask"].numpy().sum(axis=1)  # (B,)


def model_shape(model: tf.keras.Model) -> dict:
    """What the FLOP count needs: a pooler dense layer before the classifier, unless the model mean-pools."""
    from finetune.modeling import TFBertMeanPooledForSequenceClassification

    config, params = model.config, int(model.count_params())
    pooler = not isinstance(model, TFBertMeanPooledForSequenceClassification)
    return throughput.model_shape(
        config.num_hidden_layers, config.hidden_size, config.intermediate_size, config.num_labels, pooler, params
    )


def measure(data_args: DataArguments, args: FinetuneArguments, bench: ThroughputArguments) -> dict:
    from transformers import AutoTokenizer

    set_seed(data_args.seed)
    checkpoint = resolve_checkpoint(args.model)
    tokenizer = AutoTokenizer.from_pretrained(checkpoint.directory)
    task = load_task(data_args)
    texts = task.texts("train")
    tokenize = time_tokenizer(lambda batch: encode(tokenizer, batch, data_args.max_length), texts)
    encoded = encode(tokenizer, texts, data_args.max_length)
    pad_id = tokenizer.pad_token_id
    dataset = train_dataset(
        encoded, task.targets("train"), args.batch_size, data_args.max_length, pad_id, data_args.seed
    )
    batches = list(dataset.repeat().take(bench.batches_needed))  # later epochs when the split is small
    steps = steps_per_epoch(encoded.lengths, args.batch_size, data_args.max_length)
    model = build_model(checkpoint, task.labels, args, args.plan(steps).total_steps, task.kind)
    logger.info("Timing %d rounds of %d steps of batch %d", bench.rounds, bench.steps, args.batch_size)
    timing = measure_training(
        model,
        batches,
        dataset.element_spec,
        lambda batch: pad_batch(batch, data_args.max_length, pad_id),
        real_lengths,
        bench,
    )
    shape = model_shape(model)
    return throughput_result(
        "finetune", args.model, shape, args.batch_size, data_args.max_length, len(texts), tokenize, timing
    )


def main(argv: list[str] | None = None) -> int:
    return throughput_main(argv, FinetuneArguments, measure)


if __name__ == "__main__":
    sys.exit(main())
