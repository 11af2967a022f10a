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


def assert_translates(run: Path, texts: list[str]) -> list[str]:
    """The run's saved model translates each text into something (never an empty string), exactly as the run's
    weights decode it in Python; returns the translations."""
    import tensorflow as tf

    from core.translator import load
    from scratch.translation import decoding
    from scratch.translation.tokenizer import encode_source
    from scratch.translation.train import load_trained

    outputs = load(run).translate(texts)
    model, tokenizer, record = load_trained(run)
    max_length = record.data.options["max_length"]
    ids = decoding.decode(model, encode_source(tokenizer, tf.constant(texts), max_length), max_length).best
    assert outputs == [t.decode("utf-8") for t in tokenizer.detokenize(ids).numpy()]
    assert all(output.strip() for output in outputs), outputs
    return outputs
