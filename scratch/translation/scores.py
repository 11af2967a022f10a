"""The translation scores: corpus sacreBLEU and chrF++ of hypotheses against references, with their signatures."""

from __future__ import annotations

from typing import Any

import sacrebleu


def score(hypotheses: list[str], references: list[str]) -> dict[str, Any]:
    """Corpus sacreBLEU (13a tokenisation, cased) and chrF++ (chrF with word order 2), on the 0-100 scale."""
    bleu = sacrebleu.BLEU(tokenize="13a", lowercase=False)
    chrf = sacrebleu.CHRF(word_order=2)
    return {
        "bleu": bleu.corpus_score(hypotheses, [references]).score,
        "chrf": chrf.corpus_score(hypotheses, [references]).score,
        "signatures": {"bleu": str(bleu.get_signature()), "chrf": str(chrf.get_signature())},
    }
