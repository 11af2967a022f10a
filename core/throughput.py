"""The training-throughput measurement that `python -m finetune.throughput` and `python -m scratch.throughput` share.

Each side builds its real model and its real batches (length-grouped, padded to their own length) with its
own training code; this module times them against the same batches padded to `--max-length` tokens, on the
same model and texts, in alternating rounds (real then padded, padded then real, ...) so that whatever else
the machine does hits both alike. The fp32 matmul rate is measured between rounds in the same process. The
result is one JSON object on stdout that `compare bench` reads; this module imports no side.
"""

from __future__ import annotations

import json
import logging
import resource
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import tensorflow as tf

Batch = Any  # one element of a side's training dataset: (features, labels) as eager tensors


@dataclass
class ThroughputArguments:
    """How long to measure. `compare bench` picks these from its profile."""

    rounds: int = field(default=3, metadata={"help": "Timed rounds; each times both pipelines on the same batches."})
    steps: int = field(default=4, metadata={"help": "Training steps per pipeline per round."})
    warmup: int = field(default=2, metadata={"help": "Untimed steps per pipeline first (tracing, allocation)."})
    matmul_size: int = field(default=1024, metadata={"help": "Side of the square fp32 matmul that sets the peak rate."})

    def __post_init__(self) -> None:
        for name in ("rounds", "steps", "warmup"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name} must be at least 1, got {getattr(self, name)}.")
        if self.matmul_size < 64:
            raise ValueError(f"--matmul-size must be at least 64, got {self.matmul_size}.")

    @property
    def batches_needed(self) -> int:
        return self.warmup + self.rounds * self.steps


def matmul_gflops(size: int = 1024, repeats: int = 5) -> float:
    """This machine's fp32 matrix-multiplication rate now: the best of `repeats` (size x size) @ (size x size)."""
    a = tf.random.stateless_normal((size, size), seed=(1, 2))
    b = tf.random.stateless_normal((size, size), seed=(3, 4))
    matmul = tf.function(lambda x, y: tf.reduce_sum(tf.matmul(x, y)))
    matmul(a, b).numpy()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        matmul(a, b).numpy()
        best = min(best, time.perf_counter() - start)
    return 2 * size**3 / best / 1e9


def peak_rss_mb() -> float:
    """This process's peak resident memory so far, in MB (Linux reports kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def time_tokenizer(tokenize: Callable[[list[str]], Any], texts: list[str]) -> dict:
    """Texts per second of `tokenize` over all of `texts` (after a small untimed call)."""
    tokenize(texts[:64])
    start = time.perf_counter()
    tokenize(texts)
    seconds = time.perf_counter() - start
    return {"texts": len(texts), "seconds": round(seconds, 4), "texts_per_s": len(texts) / max(seconds, 1e-9)}


def _steps(model: tf.keras.Model, batches: Sequence[Batch], spec: Any) -> Callable[[], float]:
    """A call that runs Keras' own train function (what `fit` calls each step) over `batches`.

    The iterator is made (and starts filling its prefetch buffer) before the call, so timing the call times
    the training steps rather than setting up the input. The call returns the last loss.
    """
    dataset = tf.data.Dataset.from_generator(lambda: iter(batches), output_signature=spec).prefetch(2)
    iterator = iter(dataset)

    def run() -> float:
        logs = {}
        for _ in batches:
            logs = model.train_function(iterator)
        return float(logs["loss"])  # reading the value waits for the last step

    return run


def _timed(model: tf.keras.Model, batches: Sequence[Batch], spec: Any) -> float:
    run = _steps(model, batches, spec)
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def measure_training(
    model: tf.keras.Model,
    batches: list[Batch],
    spec: Any,
    pad_to_max: Callable[[Batch], Batch],
    lengths: Callable[[Batch], np.ndarray],
    args: ThroughputArguments,
) -> dict:
    """Times real batches against the same batches padded to the maximum length, alternating, after warm-up.

    Args:
        model: the compiled model, trained by both pipelines in turn (costs do not depend on the weights).
        batches: at least `args.batches_needed` batches of the side's real pipeline.
        spec: the element spec of the side's dataset (unknown sequence length), so one trace serves both.
        pad_to_max: the same batch padded to the maximum length.
        lengths: the real (non-padding) token count of each text of a batch.
    Returns:
        `rounds` (per round: examples, the real-length histogram, positions computed and seconds of both
        pipelines, and the matmul rate measured before the round) and the warm-up losses.
    """
    if len(batches) < args.batches_needed:
        raise ValueError(f"Need {args.batches_needed} batches to measure, the pipeline gave {len(batches)}.")
    model.make_train_function()
    padded = [pad_to_max(b) for b in batches]
    warm = slice(0, args.warmup)
    warmup_loss = [_steps(model, batches[warm], spec)(), _steps(model, padded[warm], spec)()]
    rounds = []
    for r in range(args.rounds):
        chosen = slice(args.warmup + r * args.steps, args.warmup + (r + 1) * args.steps)
        gflops = matmul_gflops(args.matmul_size)
        if r % 2 == 0:
            real_seconds = _timed(model, batches[chosen], spec)
            pad_seconds = _timed(model, padded[chosen], spec)
        else:
            pad_seconds = _timed(model, padded[chosen], spec)
            real_seconds = _timed(model, batches[chosen], spec)
        text_lengths = np.concatenate([lengths(b) for b in batches[chosen]])
        values, counts = np.unique(text_lengths, return_counts=True)
        rounds.append(
            {
                "examples": int(len(text_lengths)),
                "lengths": {str(int(v)): int(c) for v, c in zip(values, counts)},
                "real_positions": int(sum(_positions(b) for b in batches[chosen])),
                "pad_positions": int(sum(_positions(b) for b in padded[chosen])),
                "real_seconds": real_seconds,
                "pad_seconds": pad_seconds,
                "matmul_gflops": gflops,
            }
        )
    return {"rounds": rounds, "warmup_loss": warmup_loss, "final_matmul_gflops": matmul_gflops(args.matmul_size)}


def model_shape(layers: int, d_model: int, d_ff: int, num_labels: int, pooler: bool, params: int) -> dict:
    """What `compare bench`'s FLOP count needs to know of a side's model."""
    return {
        "layers": layers,
        "d_model": d_model,
        "d_ff": d_ff,
        "num_labels": num_labels,
        "pooler": pooler,
        "params": params,
    }


def throughput_result(
    side: str, model: str, shape: dict, batch_size: int, max_length: int, train_rows: int, tokenize: dict, timing: dict
) -> dict:
    """The JSON object a side's throughput command prints: what was timed, the tokenizer's rate and the rounds."""
    return {
        "side": side,
        "model": model,
        "shape": shape,
        "batch_size": batch_size,
        "max_length": max_length,
        "train_rows": train_rows,
        "tokenize": tokenize,
        **timing,
    }


def _positions(batch: Batch) -> int:
    """Token positions the model computes for a batch: batch size times padded length."""
    features = batch[0]
    ids = features["input_ids"] if isinstance(features, dict) else features
    return int(ids.shape[0] * ids.shape[1])


def throughput_main(argv: list[str] | None, side_arguments: type, measure: Callable[..., dict]) -> int:
    """The entry point of a side's throughput command: parse its options, measure, print the JSON line."""
    from core.args import DataArguments
    from core.cli import Command

    def setup_logging(verbose: bool) -> None:
        logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s: %(message)s")

    def work(*parsed: Any) -> None:
        emit(measure(*parsed))

    command = Command(
        prog=None,
        description="Measures a side's training throughput and prints it as one JSON line.",
        arguments=(DataArguments, side_arguments, ThroughputArguments),
        work=work,
        logging=setup_logging,
    )
    return command.main(argv)


def emit(result: dict) -> None:
    """The result as one JSON line on stdout, the line `compare bench` reads (logs go to stderr)."""
    sys.stdout.write(json.dumps({**result, "peak_rss_mb": peak_rss_mb()}) + "\n")
    sys.stdout.flush()
