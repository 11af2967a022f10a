"""The transfer set's augmentation: seeded, one copy per text and round, and each perturbation of the recipe."""

from __future__ import annotations

import numpy as np

from scratch.distill.augment import MASK, Recipe, augment, perturb

TEXTS = [
    "a gripping and funny film",
    "the plot drags on and on",
    "superb acting throughout",
    "",
    "dull",
]


def test_the_same_seed_gives_the_same_transfer_texts_and_another_seed_others():
    first, again, other = augment(TEXTS, 3, seed=7), augment(TEXTS, 3, seed=7), augment(TEXTS, 3, seed=8)
    assert first == again
    assert first != other
    assert len(first) == 3 * len(TEXTS)
    assert first[3] == first[3 + len(TEXTS)] == ""  # an empty text stays empty in every copy


def test_no_perturbation_leaves_every_copy_unchanged():
    none = Recipe(p_mask=0.0, p_replace=0.0, p_ngram=0.0)
    assert augment(TEXTS, 2, seed=0, recipe=none) == TEXTS + TEXTS


def test_masking_replacement_and_ngrams_follow_their_probabilities():
    words = [f"w{i}" for i in range(20)]
    rng = np.random.default_rng(0)
    pool = ["other"]
    masked = [perturb(words, pool, rng, Recipe(p_mask=1.0, p_replace=0.0, p_ngram=0.0)) for _ in range(3)]
    assert all(text.split() == [MASK] * 20 for text in masked)
    replaced = perturb(words, pool, rng, Recipe(p_mask=0.0, p_replace=1.0, p_ngram=0.0))
    assert replaced.split() == ["other"] * 20
    for _ in range(50):
        kept = perturb(words, pool, rng, Recipe(p_mask=0.0, p_replace=0.0, p_ngram=1.0, max_ngram=5)).split()
        assert 1 <= len(kept) <= 5
        start = words.index(kept[0])
        assert kept == words[start : start + len(kept)]  # a contiguous n-gram of the original


def test_the_default_recipe_masks_about_a_tenth_of_the_words_and_replaces_from_train():
    texts = [" ".join(f"t{j}w{i}" for i in range(30)) for j in range(200)]
    copies = augment(texts, 1, seed=3, recipe=Recipe(p_ngram=0.0))
    words = [w for text in copies for w in text.split()]
    train_words = {w for text in texts for w in text.split()}
    assert abs(words.count(MASK) / len(words) - 0.1) < 0.02
    changed = sum(a != b for text, copy in zip(texts, copies) for a, b in zip(text.split(), copy.split()))
    assert abs(changed / len(words) - 0.2) < 0.02  # masked or replaced (a replacement may draw the same word)
    assert set(words) - {MASK} <= train_words
