"""Bootstrap intervals, paired bootstrap resampling and breakdowns, checked against sacrebleu directly."""

from __future__ import annotations

import random

import numpy as np
import pytest
import sacrebleu

from compare.scoring.statistics import StatisticsArguments
from compare.translation.scoring import largest_differences, length_bucket, score_systems
from compare.translation.statistics import resample_counts, resampled_scores, sentence_stats
from core.pairs import PairSplit

WORDS = "the cat sat on a mat while my dog ran to see what all that noise was about today".split()


def corpus(n: int = 80, seed: int = 0) -> PairSplit:
    rng = random.Random(seed)
    sources, targets = [], []
    for i in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(3, 14))]
        targets.append(" ".join(words).capitalize() + ".")
        sources.append(f"fonte {i} " + " ".join(reversed(words)))
    return PairSplit(sources, targets, ["a" if i % 3 else "b" for i in range(n)])


def degrade(sentences: list[str], rate: float, seed: int) -> list[str]:
    """Each sentence with a share `rate` of its words replaced by an unknown word (at least one)."""
    rng = random.Random(seed)
    out = []
    for sentence in sentences:
        words = sentence.split()
        hit = set(rng.sample(range(len(words)), max(1, round(rate * len(words)))))
        out.append(" ".join("zzz" if i in hit else w for i, w in enumerate(words)))
    return out


def bleu(hyps: list[str], refs: list[str]) -> float:
    return sacrebleu.BLEU(tokenize="13a").corpus_score(hyps, [refs]).score


def chrf(hyps: list[str], refs: list[str]) -> float:
    return sacrebleu.CHRF(word_order=2).corpus_score(hyps, [refs]).score


ARGS = StatisticsArguments(bootstrap_resamples=300, bootstrap_seed=1)


def test_scores_intervals_and_breakdowns_match_sacrebleu() -> None:
    split = corpus()
    outputs = {"good": degrade(split.targets, 0.2, 1), "poor": degrade(split.targets, 0.6, 2)}
    entries, _, _, signatures = score_systems(outputs, split, ARGS)
    for name, hyps in outputs.items():
        entry = entries[name]
        assert entry["bleu"] == pytest.approx(bleu(hyps, split.targets))
        assert entry["chrf"] == pytest.approx(chrf(hyps, split.targets))
        for metric in ("bleu", "chrf"):
            lo, hi = entry[f"{metric}_ci"]
            assert lo < entry[metric] < hi
        for domain in ("a", "b"):
            rows = [i for i, d in enumerate(split.domains) if d == domain]
            sub = ([hyps[i] for i in rows], [split.targets[i] for i in rows])
            assert entry["per_domain"][domain] == pytest.approx(
                {"n": len(rows), "bleu": bleu(*sub), "chrf": chrf(*sub)}
            )
        assert sum(b["n"] for b in entry["per_length"].values()) == len(split)
    assert "tok:13a" in signatures["bleu"] and "nw:2" in signatures["chrf"]


def test_a_resample_scores_as_sacrebleu_scores_the_resampled_corpus() -> None:
    split = corpus(40)
    hyps = degrade(split.targets, 0.3, 3)
    counts = resample_counts(len(split), StatisticsArguments(bootstrap_resamples=100, bootstrap_seed=7))
    samples = resampled_scores(sentence_stats(hyps, split.targets), counts)
    for r in (0, 57):
        rows = np.repeat(np.arange(len(split)), counts[r].astype(int))
        assert samples["bleu"][r] == pytest.approx(bleu([hyps[i] for i in rows], [split.targets[i] for i in rows]))
        assert samples["chrf"][r] == pytest.approx(chrf([hyps[i] for i in rows], [split.targets[i] for i in rows]))


def test_a_system_better_on_every_sentence_wins_with_p_near_zero() -> None:
    split = corpus()
    perfect, worse = list(split.targets), degrade(split.targets, 0.4, 4)
    entries, (comparison,), stats, _ = score_systems({"perfect": perfect, "worse": worse}, split, ARGS)
    sentence = [stats[n].sentence_scores("chrf") for n in ("perfect", "worse")]
    assert (sentence[0] > sentence[1]).all()  # better on every sentence
    assert comparison["bleu_diff"] == pytest.approx(entries["perfect"]["bleu"] - entries["worse"]["bleu"])
    assert comparison["bleu_diff_ci"][0] > 0 and comparison["chrf_diff_ci"][0] > 0
    assert comparison["bleu_p"] <= 2 / (ARGS.bootstrap_resamples + 1)
    assert comparison["winner"] == "perfect"
    assert comparison["verdict"].startswith("perfect beats worse by")


def test_identical_systems_have_no_winner() -> None:
    split = corpus()
    same = degrade(split.targets, 0.3, 5)
    _, (comparison,), _, _ = score_systems({"one": same, "two": list(same)}, split, ARGS)
    assert comparison["bleu_diff"] == 0 and comparison["bleu_diff_ci"] == [0.0, 0.0]
    assert comparison["bleu_p"] == 1.0 and comparison["chrf_p"] == 1.0
    assert comparison["winner"] is None
    assert comparison["verdict"].startswith("No clear winner between one and two")


def test_largest_differences_come_widest_first_and_leave_copy_source_out() -> None:
    split = corpus(30)
    outputs = {
        "good": degrade(split.targets, 0.1, 6),
        "poor": degrade(split.targets, 0.7, 7),
        "copy_source": split.sources,
    }
    _, _, stats, _ = score_systems(outputs, split, ARGS)
    rows = largest_differences(outputs, stats, split, 5)
    assert len(rows) == 5 and set(rows[0]["chrf"]) == {"good", "poor"}
    spreads = [r["spread"] for r in rows]
    assert spreads == sorted(spreads, reverse=True)
    first = rows[0]
    own = sacrebleu.CHRF(word_order=2).sentence_score(outputs["poor"][first["index"]], [first["reference"]]).score
    assert first["chrf"]["poor"] == pytest.approx(own)
    assert first["translations"]["copy_source"] == first["source"]


@pytest.mark.parametrize(
    ("text", "bucket"), [("um dois", "1-5"), (" ".join(["a"] * 6), "6-10"), (" ".join(["a"] * 41), "41+")]
)
def test_length_buckets_count_source_words(text: str, bucket: str) -> None:
    assert length_bucket(text) == bucket
