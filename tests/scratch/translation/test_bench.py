"""The bench scores a run's split with sacrebleu as a direct computation would, per decoding, and times both
greedy decoders."""

from __future__ import annotations

import json

import pytest
import sacrebleu

from core.pairs import PairDataArguments, load_pairs
from core.translator import load
from scratch.translation.bench import main


@pytest.mark.slow
def test_bench_scores_the_test_split_per_decoding_and_times_cached_and_uncached_greedy(tiny_translation_run, capsys):
    argv = ["--run", str(tiny_translation_run), "--output-tokens", "8", "--timing-batch", "4", "--repeats", "1"]
    assert main([*argv, "--beam", "3"]) == 0
    result = json.loads(capsys.readouterr().out)
    translator = load(tiny_translation_run)  # the saved model: the bench decodes the weights as it does
    split = load_pairs(PairDataArguments(**translator.record.data.options)).splits["test"]
    assert result["n"] == len(split) == 135
    assert list(result["decodings"]) == ["greedy", "beam 3", "beam 3 + MBR"]
    for decoding, beam, mbr in (("greedy", 1, False), ("beam 3", 3, False), ("beam 3 + MBR", 3, True)):
        hypotheses = translator.translate(split.sources, beam=beam, mbr=mbr)
        found = result["decodings"][decoding]
        assert (found["beam"], found["mbr"]) == (beam, mbr)
        assert found["bleu"] == sacrebleu.corpus_bleu(hypotheses, [split.targets]).score
        assert found["chrf"] == sacrebleu.corpus_chrf(hypotheses, [split.targets], word_order=2).score
        assert "per_domain" not in found  # the toy file names no domain
        assert found["sentences_per_second"] == pytest.approx(len(split) / found["seconds"])
    timing = result["greedy_timing"]
    assert (timing["batch"], timing["output_tokens"]) == (4, 8)
    assert timing["cached_seconds"] > 0 and timing["uncached_seconds"] > 0


@pytest.mark.slow
def test_an_output_file_holds_the_results_and_the_terminal_a_line_per_decoding(tiny_translation_run, tmp_path, capsys):
    out = tmp_path / "bench.json"
    argv = ["--run", str(tiny_translation_run), "--output-tokens", "8", "--timing-batch", "4", "--repeats", "1"]
    assert main([*argv, "--beam", "2", "--decodings", "greedy", "beam", "--output-file", str(out)]) == 0
    result = json.loads(out.read_text())
    printed = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in printed[:2]] == list(result["decodings"]) == ["greedy", "beam 2"]
    assert printed[0].startswith(f"greedy: BLEU {result['decodings']['greedy']['bleu']:.2f}, chrF++ ")
    assert len(printed) == 3 and printed[2].endswith(f"all results in {out}")


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--split", "dev"], "error: --split must be one of train, validation, test, got 'dev'."),
        (["--beam", "0"], "error: --beam must be at least 1, got 0."),
        (["--decodings", "sampling"], "error: --decodings takes greedy, beam, mbr; got sampling."),
        (["--beam", "1"], "error: --beam 1 is greedy decoding: measure --decodings greedy, or give a beam of 2"),
        ([], "error: Run directory {missing} does not exist."),
    ],
)
def test_bad_options_and_a_missing_run_are_one_error_line(tmp_path, capsys, flags, message):
    missing = tmp_path / "no-run"
    with pytest.raises(SystemExit) as exit_:
        main(["--run", str(missing), *flags])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.startswith(message.format(missing=missing))


@pytest.mark.slow
def test_timing_records_the_output_length_short_sources_allow(tiny_translation_run, caplog):
    from scratch.translation.bench import BenchArguments
    from scratch.translation.measure import time_cache

    sources = ["gato sol", "rio mar"]  # each allows ceil(1.5 x its tokens) + a few output tokens
    timing = time_cache(BenchArguments(run=str(tiny_translation_run), output_tokens=500, repeats=1), sources)
    assert timing["batch"] == 2 and 2 < timing["output_tokens"] < 30
    assert "allow only" in caplog.text and "(--output-tokens)" in caplog.text
