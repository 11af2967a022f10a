"""Generated long documents for the tests of reading long texts (`core.long_text`): each says what it thinks in one
phrase in its middle, surrounded by words that say nothing, so that a model reading only its head cannot tell and a
model reading every window can."""

from __future__ import annotations

import random
from pathlib import Path

from tests.conftest import NEGATIVE, POSITIVE, write_csv

FILLER = ["the", "movie", "it", "was", "and", "very", "."]  # words of the tiny vocabularies that carry no label


def middle_documents(n: int, seed: int = 0, around: int = 24) -> list[tuple[str, str]]:
    """`n` documents, positive and negative in turn: `around` filler words, a telling phrase, `around` more."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        label = "positive" if i % 2 == 0 else "negative"
        filler = [rng.choice(FILLER) for _ in range(2 * around)]
        phrase = rng.choice(POSITIVE if label == "positive" else NEGATIVE)
        rows.append((" ".join([*filler[:around], phrase, *filler[around:]]), label))
    return rows


def write_documents(folder: Path, n: int = 200, seed: int = 0) -> Path:
    """A train file of `middle_documents` in `folder`; returns its path."""
    folder.mkdir(parents=True, exist_ok=True)
    return write_csv(folder / "documents.csv", middle_documents(n, seed))
