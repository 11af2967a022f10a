"""The transfer set's extra texts: seeded, perturbed copies of the training texts for the teacher to label.

The recipe of Tang et al. 2019, "Distilling Task-Specific Knowledge from BERT into Simple Neural Networks"
(section 3.3), on whitespace-separated words: each word is, with probability `p_mask`, replaced by `[MASK]`,
else with probability `p_replace` replaced by a word drawn from the training texts (by frequency; the paper
draws a word of the same part of speech, for which no tagger is at hand here); then, with probability
`p_ngram`, only a random n-gram of the result is kept (n uniform in 1..`max_ngram`). An augmented text need
not carry its original's label: the teacher says what it is.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MASK = "[MASK]"


@dataclass(frozen=True)
class Recipe:
    """The perturbation probabilities (the paper's p_mask, p_pos, p_ng and n-gram lengths 1..5)."""

    p_mask: float = 0.1
    p_replace: float = 0.1
    p_ngram: float = 0.25
    max_ngram: int = 5


def augment(texts: list[str], copies: int, seed: int, recipe: Recipe = Recipe()) -> list[str]:
    """`copies` perturbed versions of every text: all texts' first copy, then all texts' second, ...

    The same texts, copies and seed give the same list.

        >>> augment(["a fine film"], 2, seed=0) == augment(["a fine film"], 2, seed=0)
        True
        >>> len(augment(["a fine film", "dull"], 3, seed=0))
        6
    """
    rng = np.random.default_rng(seed)
    words = [text.split() for text in texts]
    pool = [word for row in words for word in row]  # every word as often as train has it: draws by frequency
    out = []
    for _ in range(copies):
        out.extend(perturb(row, pool, rng, recipe) for row in words)
    return out


def perturb(words: list[str], pool: list[str], rng: np.random.Generator, recipe: Recipe) -> str:
    """One perturbed copy of a text given as its words."""
    if not words:
        return ""
    draw = rng.random(len(words))
    out = []
    for word, x in zip(words, draw):
        if x < recipe.p_mask:
            out.append(MASK)
        elif x < recipe.p_mask + recipe.p_replace:
            out.append(pool[rng.integers(len(pool))])
        else:
            out.append(word)
    if rng.random() < recipe.p_ngram:
        n = min(int(rng.integers(1, recipe.max_ngram + 1)), len(out))
        start = int(rng.integers(0, len(out) - n + 1))
        out = out[start : start + n]
    return " ".join(out)
