"""Useful floating-point operations of training a Transformer encoder classifier on real (non-padding) tokens.

Matrix multiplications only (softmax, LayerNorm, GELU and embedding lookups are a few percent at most), with
a multiply-add counted as 2 operations. Forward pass of one sequence of T real tokens through a model of L
layers, width d, feed-forward width f and K classes:

    per layer   Q, K, V and output projections   4 * 2*T*d*d
                attention scores Q K^T and A V    2 * 2*T*T*d
                feed-forward (d->f, f->d)         2 * 2*T*d*f
    head        pooler dense on one token         2*d*d        (BERT's pooler; none for mean pooling)
                classifier                        2*d*K

Training costs 3 forward passes: the backward pass computes gradients for both the inputs and the weights
of every multiplication, twice the forward work. "Useful" counts each text at its own length, as if no
position were padding; utilisation divides the useful operations per second by the machine's fp32 matmul
rate, so padding, small matrices and framework overhead all show up as lost utilisation.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

TRAINING_PASSES = 3  # forward + backward (inputs and weights)


@dataclass(frozen=True)
class EncoderShape:
    """What the FLOP count needs of a model, as the throughput commands report it."""

    layers: int
    d_model: int
    d_ff: int
    num_labels: int
    pooler: bool

    @classmethod
    def from_dict(cls, shape: dict) -> EncoderShape:
        return cls(**{key: shape[key] for key in ("layers", "d_model", "d_ff", "num_labels", "pooler")})


def forward_flops(shape: EncoderShape, length: int) -> int:
    """Forward-pass FLOPs of one sequence of `length` real tokens."""
    t, d, f = length, shape.d_model, shape.d_ff
    per_layer = 4 * 2 * t * d * d + 2 * 2 * t * t * d + 2 * 2 * t * d * f
    head = (2 * d * d if shape.pooler else 0) + 2 * d * shape.num_labels
    return shape.layers * per_layer + head


def training_flops(shape: EncoderShape, lengths: Iterable[int]) -> int:
    """Forward-and-backward FLOPs of training on texts of these real lengths, each at its own length."""
    return TRAINING_PASSES * sum(forward_flops(shape, int(n)) for n in lengths)


def utilisation(useful_flops: float, seconds: float, matmul_gflops: float) -> float:
    """Useful FLOPs per second as a fraction of the measured fp32 matmul rate."""
    if seconds <= 0 or matmul_gflops <= 0:
        raise ValueError(
            f"utilisation needs positive time and matmul rate, got {seconds} s and {matmul_gflops} GFLOP/s."
        )
    return useful_flops / seconds / (matmul_gflops * 1e9)
