"""How a model reads a text longer than its window of `--max-length` pieces: the one place for the fact.

Three readings (`--long-text`), each a `Reading`:

- `head`: the first pieces, the rest cut (what every run before these options did);
- `head-tail` (the default): the first quarter of the window and the last three quarters, the middle cut, as Sun
  et al. (2019, "How to fine-tune BERT for text classification?") found best for IMDb: 128 + 382 pieces of 512;
- `chunks`: overlapping windows over the whole text (at most `--max-chunks`), each read alone, their logits pooled
  into one row per document (`pool`, mean or max; regression always the mean of the windows' values).

A side's tokenizer gives the pieces of each text; the special tokens it adds ([CLS], [SEP]) are outside the budget
and kept. `length_stats` says how many texts of a split a window cuts.

>>> head_tail(10, 8, 8), head_tail(5, 8, 8)
((2, 6), (5, 0))
>>> window_spans(10, 4, 1, 8)
[(0, 4), (3, 7), (6, 10)]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

HEAD, HEAD_TAIL, CHUNKS = "head", "head-tail", "chunks"
READINGS = (HEAD, HEAD_TAIL, CHUNKS)
POOLINGS = ("mean", "max")
DEFAULT_MAX_CHUNKS = 8
# The overlap between windows, by default a quarter of the window: a sentence cut at one window's edge is whole in
# the next for sentences up to that long, at a third more windows than without overlap.
DEFAULT_STRIDE_SHARE = 4
HEAD_SHARE = 4  # head-tail keeps the window's first quarter from the head
Span = tuple[int, int] | None  # one window [start, end) of a text's pieces; None: the text as the reading cuts it


@dataclass(frozen=True)
class Reading:
    """How texts longer than the window are read: the `--long-text` options of `core.args.DataArguments`.

    Attributes:
        long_text: `head`, `head-tail` or `chunks`.
        stride: pieces shared by consecutive windows (the Hugging Face tokenizers' `stride`); None: a quarter of
            the window.
        max_chunks: windows at most per document; more are spread evenly over the text.
        chunk_pooling: how the windows' logits become the document's: `mean` or `max`.
        train_chunks: training reads every window of a text with the text's label (else its head-tail cut).
    """

    long_text: str = HEAD_TAIL
    stride: int | None = None
    max_chunks: int = DEFAULT_MAX_CHUNKS
    chunk_pooling: str = "mean"
    train_chunks: bool = False

    @classmethod
    def of(cls, options: Mapping[str, Any]) -> Reading:
        """The reading of run.json's `data.options` (or `DataArguments.to_dict()`); a run recorded before these
        options read the head of every text, and reads so still.

        >>> Reading.of({"max_length": 128}).long_text, Reading.of({"long_text": "chunks"}).long_text
        ('head', 'chunks')
        """
        given = {name: options[name] for name in cls.__dataclass_fields__ if options.get(name) is not None}
        return cls(**{"long_text": HEAD, **given})

    @property
    def pools(self) -> bool:
        """Whether prediction reads windows and pools them into one row per document."""
        return self.long_text == CHUNKS

    def windows_for_training(self) -> bool:
        """Whether each training text becomes its windows, each with the text's label."""
        return self.pools and self.train_chunks

    def stride_for(self, size: int) -> int:
        """The overlap of consecutive windows of `size` pieces."""
        stride = size // DEFAULT_STRIDE_SHARE if self.stride is None else self.stride
        return min(stride, size - 1)

    def cut(self, pieces: Sequence, budget: int, window: int) -> Sequence:
        """`pieces` cut to `budget` (their head, or head and tail); the head-tail split follows `window` (the whole
        window, special tokens included, as 128 + 382 of 512)."""
        if len(pieces) <= budget:
            return pieces
        if self.long_text == HEAD:
            return pieces[:budget]
        head, tail = head_tail(len(pieces), budget, window)
        return [*pieces[:head], *pieces[len(pieces) - tail :]]

    def kept(self, length: int, budget: int, window: int, span: Span = None) -> list[int]:
        """The positions of a text's `length` pieces a model reads: those of `span` (one window of `spans`), or
        without it the pieces `cut` keeps.

        >>> Reading(HEAD_TAIL).kept(10, 4, 4), Reading(CHUNKS).kept(10, 4, 4, (3, 7))
        ([0, 7, 8, 9], [3, 4, 5, 6])
        """
        if span is not None:
            return list(range(*span))
        return list(self.cut(list(range(length)), budget, window))

    def spans(self, length: int, size: int) -> list[tuple[int, int]]:
        """The windows of a text of `length` pieces under this reading: one (its head-tail cut is made by `cut`),
        or with `chunks`, `window_spans`."""
        if not self.pools:
            return [(0, length)]
        return window_spans(length, size, self.stride_for(size), self.max_chunks)


DEFAULT_READING = Reading()


def head_tail(length: int, budget: int, window: int) -> tuple[int, int]:
    """How many pieces a text of `length` keeps from its head and from its tail within `budget` pieces: all of a
    text that fits; else a quarter of `window` (the whole window, special tokens included) from the head and the
    rest of the budget from the tail.

    >>> head_tail(1000, 510, 512), head_tail(300, 128, 128), head_tail(100, 128, 128)
    ((128, 382), (32, 96), (100, 0))
    """
    if length <= budget:
        return length, 0
    head = min(window // HEAD_SHARE, budget)
    return head, budget - head


def window_spans(length: int, size: int, stride: int, max_chunks: int) -> list[tuple[int, int]]:
    """`[start, end)` of each window over `length` pieces: windows of `size` pieces, consecutive ones sharing
    `stride`, the last one ending at the text's end (shorter when the text ends sooner), as the Hugging Face
    tokenizers' `return_overflowing_tokens` cut them. When that takes more than `max_chunks` windows, `max_chunks`
    full windows are spread evenly from the text's start to its end instead.

    >>> window_spans(3, 4, 1, 8), window_spans(20, 4, 1, 3)
    ([(0, 3)], [(0, 4), (8, 12), (16, 20)])
    """
    if not 0 <= stride < size:
        raise ValueError(f"stride must be at least 0 and below the window of {size} pieces, got {stride}.")
    if length <= size:
        return [(0, length)]
    step = size - stride
    count = 1 + math.ceil((length - size) / step)
    if count <= max_chunks:
        return [(i * step, min(i * step + size, length)) for i in range(count)]
    starts = np.linspace(0, length - size, max_chunks).round().astype(int) if max_chunks > 1 else [0]
    return [(int(start), int(start) + size) for start in starts]


def pool(rows: np.ndarray, documents: np.ndarray, how: str, values: bool = False) -> np.ndarray:
    """One row per document from its windows' rows: logits (W, K), or values (W,) with `values` (always their mean).

    Args:
        rows: each window's logits or value, windows of a document next to each other or not.
        documents: each window's document, 0..D-1, every document with at least one window.
        how: `mean` or `max` (for logits).

    Returns:
        (D, K) or (D,) float32.

    >>> pool(np.array([[1.0, 0.0], [3.0, -2.0], [5.0, 5.0]]), np.array([0, 0, 1]), "max")
    array([[3., 0.],
           [5., 5.]], dtype=float32)
    """
    rows = np.asarray(rows, dtype=np.float32)
    documents = np.asarray(documents, dtype=np.int64)
    count = int(documents.max()) + 1 if len(documents) else 0
    if how not in POOLINGS:
        raise ValueError(f"chunk pooling must be one of {', '.join(POOLINGS)}, got {how!r}.")
    if how == "max" and not values:
        out = np.full((count, *rows.shape[1:]), -np.inf, dtype=np.float32)
        np.maximum.at(out, documents, rows)
        return out
    sums = np.zeros((count, *rows.shape[1:]), dtype=np.float32)
    np.add.at(sums, documents, rows)
    windows = np.bincount(documents, minlength=count).astype(np.float32)
    return sums / windows.reshape(-1, *([1] * (rows.ndim - 1)))


def length_stats(lengths: Sequence[int], window: int) -> dict[str, float]:
    """How a split's texts fit a window of `window` pieces: the share longer than it (`longer`) and the texts'
    median length in pieces (`median`).

    >>> length_stats([10, 200, 300, 50], 128)
    {'longer': 0.5, 'median': 125.0}
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    if not len(lengths):
        return {"longer": 0.0, "median": 0.0}
    return {"longer": float(np.mean(lengths > window)), "median": float(np.median(lengths))}


def chunk_counts(counts: Sequence[int]) -> dict[str, float]:
    """Windows per document of a split read in chunks: their mean and most.

    >>> chunk_counts([1, 3, 2])
    {'mean': 2.0, 'max': 3}
    """
    counts = np.asarray(counts, dtype=np.int64)
    return {"mean": float(counts.mean()) if len(counts) else 0.0, "max": int(counts.max()) if len(counts) else 0}
