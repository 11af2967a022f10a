"""A toy translation task written by the tests: a ten-word "Portuguese" mapped word by word to English."""

from __future__ import annotations

import random
from pathlib import Path

WORDS = {
    "gato": "cat",
    "sol": "sun",
    "casa": "house",
    "lua": "moon",
    "mar": "sea",
    "pato": "duck",
    "bolo": "cake",
    "faca": "knife",
    "dedo": "finger",
    "rio": "river",
}


def toy_pairs(n: int, seed: int = 0) -> list[tuple[str, str]]:
    """`n` pairs of 3 to 8 words; the target translates each source word in place."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        words = [rng.choice(list(WORDS)) for _ in range(rng.randint(3, 8))]
        pairs.append((" ".join(words), " ".join(WORDS[w] for w in words)))
    return pairs


def write_tsv(path: Path, rows: list[tuple], header: tuple[str, ...] = ("pt", "en")) -> Path:
    lines = ["\t".join(header)] + ["\t".join(row) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
