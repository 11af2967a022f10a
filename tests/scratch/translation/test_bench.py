"""The bench scores a run's split with sacrebleu as a direct computation would, and times both decoders."""

from __future__ import annotations

import sacrebleu

from core.pairs import PairDataArguments, load_pairs
from core.translator import load
from scratch.translation.bench import main


def test_bench_scores_the_test_split_and_times_cached_and_uncached_greedy(tiny_translation_run, capsys):
    result = main(["--run", str(tiny_translation_run), "--output-tokens", "8", "--timing-batch", "4", "--repeats", "1"])
    translator = load(tiny_translation_run)
    split = load_pairs(PairDataArguments(**translator.run["data"]["options"])).splits["test"]
    hypotheses = translator.translate(split.sources)
    assert result["n"] == len(split) == 270
    assert result["bleu"] == sacrebleu.corpus_bleu(hypotheses, [split.targets]).score
    assert result["chrf"] == sacrebleu.corpus_chrf(hypotheses, [split.targets], word_order=2).score
    assert "per_domain" not in result  # the toy file names no domain
    timing = result["greedy_timing"]
    assert (timing["batch"], timing["output_tokens"]) == (4, 8)
    assert timing["cached_seconds"] > 0 and timing["uncached_seconds"] > 0
    assert '"sentences_per_second"' in capsys.readouterr().out
