"""Tiny data of every kind of task, single texts or pairs, and finished tiny runs on it, for the scratch tests."""

from __future__ import annotations

import random
from pathlib import Path

from core.tasks import MULTI_LABEL, REGRESSION, SINGLE_LABEL
from tests.conftest import NEGATIVE, POSITIVE, write_csv
from tests.scratch.tiny import train_tiny_run

KINDS = (SINGLE_LABEL, MULTI_LABEL, REGRESSION)


def kind_rows(problem_type: str, pairs: bool, n: int = 160, seed: int = 0) -> tuple[str, list[tuple]]:
    """A CSV header and `n` rows a bag of words learns: each text one or two phrases, positive or negative.

    Single label: `positive` when the (first) text is, else `negative`;
    multi-label: each sentiment that occurs among the phrases; regression: the share of positive phrases, 0..1
    (for pairs, of the first text counted twice and the second once, over 3).
    """
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        first = [rng.random() < 0.5 for _ in range(1 + i % 2)]  # True: a positive phrase
        second = [rng.random() < 0.5 for _ in range(1 + (i // 2) % 2)] if pairs else []
        texts = [" ".join(rng.choice(POSITIVE if p else NEGATIVE) for p in side) for side in (first, second)]
        if problem_type == SINGLE_LABEL:
            label = "positive" if all(first) else "negative"
        elif problem_type == MULTI_LABEL:
            label = ";".join(
                name for name, on in (("negative", not all(first + second)), ("positive", any(first + second))) if on
            )
        else:
            label = f"{(2 * sum(first) / len(first) + (sum(second) / len(second) if pairs else 0)) / (3 if pairs else 2):.3f}"
        rows.append((texts[0], texts[1], label) if pairs else (texts[0], label))
    return ("text,text_pair,label" if pairs else "text,label"), rows


def kind_argv(problem_type: str, pairs: bool) -> dict:
    """The options of a tiny run of this kind, besides the train file (`tests.scratch.tiny.train_tiny_run`)."""
    options = {"problem": problem_type}
    if pairs:
        options["text_pair_column"] = "text_pair"
    return options


def write_kind_file(path: Path, problem_type: str, pairs: bool, n: int = 160) -> Path:
    header, rows = kind_rows(problem_type, pairs, n)
    return write_csv(path, rows, header=header)


def train_kind_run(folder: Path, problem_type: str, pairs: bool, **overrides) -> Path:
    """A finished tiny run of this kind in `folder / "run"`, its data in `folder / "train.csv"`."""
    folder.mkdir(parents=True, exist_ok=True)
    train_file = write_kind_file(folder / "train.csv", problem_type, pairs)
    return train_tiny_run(folder / "run", train_file, **kind_argv(problem_type, pairs), **overrides)
