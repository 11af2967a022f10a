"""Minimum-Bayes-risk selection picks the chrF++ consensus, checked against sacrebleu's sentence chrF++."""

from __future__ import annotations

import numpy as np
import pytest
import sacrebleu

from core.mbr import consensus

# The first candidate, a beam search's most likely, is the odd one out; the other three share most of their words.
CANDIDATES = ["a dog ran into the park", "the cat sat on the mat", "the cat sat on a mat", "the cat is on the mat"]


def _mean_chrf(candidates: list[str]) -> list[float]:
    return [
        np.mean([sacrebleu.sentence_chrf(h, [o], word_order=2).score for j, o in enumerate(candidates) if j != i])
        for i, h in enumerate(candidates)
    ]


def test_the_candidate_the_others_agree_with_most_by_chrf_plus_plus_is_chosen():
    means = _mean_chrf(CANDIDATES)
    assert consensus(CANDIDATES) == int(np.argmax(means)) == 1
    assert means[0] < min(means[1:])  # the beam's first pick is the one MBR moves away from
    assert consensus(CANDIDATES[::-1]) == 2  # the same sentence, wherever it stands


def test_of_equal_candidates_the_earliest_and_a_lone_one_are_chosen():
    assert consensus(["the sun", "the sun", "a moon"]) == 0
    assert consensus(["only one"]) == 0
    with pytest.raises(ValueError, match="needs at least one candidate"):
        consensus([])
