"""Minimum-Bayes-risk selection: among one sentence's candidate translations, the one the others agree with most.

Each candidate is scored by its mean sentence chrF++ (sacrebleu) against every other candidate, the others
standing in as references the model finds likely (Kumar and Byrne 2004; chrF as the utility, as in Freitag et al.
2022). The candidates are a beam search's finished hypotheses (`core.translator`, `--mbr`).
"""

from __future__ import annotations

from sacrebleu.metrics import CHRF

CHRF_PLUS_PLUS = CHRF(word_order=2)  # chrF++: character 6-grams and word 1- and 2-grams


def consensus(candidates: list[str]) -> int:
    """The index of the candidate with the highest mean sentence chrF++ against the other candidates; of equal
    means, the earliest (a beam search lists its best first). A single candidate is chosen as it is."""
    if not candidates:
        raise ValueError("minimum-Bayes-risk selection needs at least one candidate.")
    if len(candidates) == 1:
        return 0
    means = [
        sum(CHRF_PLUS_PLUS.sentence_score(hypothesis, [other]).score for other in candidates[:i] + candidates[i + 1 :])
        / (len(candidates) - 1)
        for i, hypothesis in enumerate(candidates)
    ]
    return max(range(len(candidates)), key=lambda i: (means[i], -i))
