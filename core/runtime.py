"""Reproducibility and device placement shared by both training sides."""

from __future__ import annotations

import json
import logging
import os

import tensorflow as tf

logger = logging.getLogger(__name__)

STRINGS = tf.TensorSpec([None], tf.string)  # a batch of raw texts: the input of every serving function


def set_seed(seed: int) -> None:
    """Seeds Python, NumPy and TensorFlow and makes TensorFlow ops deterministic, so a rerun repeats."""
    tf.keras.utils.set_random_seed(seed)
    tf.config.experimental.enable_op_determinism()


def prefetched(dataset: tf.data.Dataset, batches: int = 2) -> tf.data.Dataset:
    """`dataset` with `batches` prefetched and tf.data's autotuning off, for a training or evaluation input.

    The autotuner's thread sleeps in doubling periods of up to a minute, and deleting an iterator can wait for it
    to wake, so Keras epochs ended late (docs/results.md, "The input pipelines and tf.data's autotuner").
    These pipelines have nothing for it to tune.
    """
    options = tf.data.Options()
    options.autotune.enabled = False
    return dataset.prefetch(batches).with_options(options)


def make_strategy(name: str) -> tf.distribute.Strategy:
    """The `tf.distribute` strategy for `--strategy default|mirrored|multiworker`.

    `mirrored` replicates over every visible GPU, or over the logical CPU devices when there is no GPU
    (tests split the CPU into two). `multiworker` reads the cluster from `TF_CONFIG`.
    """
    if name == "default":
        return tf.distribute.get_strategy()
    if name == "mirrored":
        devices = [d.name for d in tf.config.list_logical_devices("GPU")] or [
            d.name for d in tf.config.list_logical_devices("CPU")
        ]
        strategy = tf.distribute.MirroredStrategy(devices=devices)
        logger.info("MirroredStrategy over %s", devices)
        return strategy
    if name == "multiworker":
        cluster = json.loads(os.environ.get("TF_CONFIG", "{}")).get("cluster", {})
        logger.info("MultiWorkerMirroredStrategy, cluster %s", cluster or "local (no TF_CONFIG)")
        return tf.distribute.MultiWorkerMirroredStrategy()
    raise ValueError(f"Unknown strategy {name!r}; use default, mirrored or multiworker.")


def is_chief(strategy: tf.distribute.Strategy) -> bool:
    """Whether this process writes the run: always, except on the non-chief workers of `multiworker`.

    With a `TF_CONFIG` cluster the chief is the task of type `chief`, or worker 0 when there is none.
    """
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None or not resolver.task_type:
        return True
    if resolver.task_type == "chief":
        return True
    has_chief = "chief" in resolver.cluster_spec().as_dict()
    return resolver.task_type == "worker" and resolver.task_id == 0 and not has_chief
