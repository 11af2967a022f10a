"""Reading long texts (`core.long_text`): head-tail cuts, windows, pooling, length statistics, and the options'
checks (`core.args.DataArguments`) with the run.json of a run recorded before them."""

from __future__ import annotations

import numpy as np
import pytest

from core.args import DataArguments, OptionsError, RunArguments
from core.long_text import CHUNKS, HEAD, HEAD_TAIL, Reading, length_stats, pool, window_spans
from core.parsing import parse_args
from core.record import DataSection
from tests.conftest import separable_rows, write_csv
from tests.core.test_cli import SIDES, expect_one_error_line, side_flags, side_main


def test_head_tail_keeps_the_first_quarter_and_last_three_quarters_of_a_long_text() -> None:
    pieces = list(range(1000))
    cut = Reading(HEAD_TAIL).cut(pieces, 510, 512)  # BERT's 512: 128 + 382 of the 510 places between [CLS] and [SEP]
    assert cut == pieces[:128] + pieces[-382:]
    assert Reading(HEAD_TAIL).cut(pieces, 128, 128) == pieces[:32] + pieces[-96:]
    assert Reading(HEAD).cut(pieces, 128, 128) == pieces[:128]
    assert Reading(CHUNKS).cut(pieces, 128, 128) == pieces[:32] + pieces[-96:]  # training's reading under chunks


@pytest.mark.parametrize("reading", [HEAD, HEAD_TAIL, CHUNKS])
def test_a_text_that_fits_is_left_unchanged(reading) -> None:
    pieces = list(range(128))
    assert Reading(reading).cut(pieces, 128, 128) == pieces


@pytest.mark.parametrize(
    ("length", "size", "stride", "max_chunks"),
    [(1000, 126, 31, 100), (127, 126, 31, 8), (500, 64, 0, 100), (300, 50, 49, 1000), (50, 64, 16, 8)],
)
def test_windows_cover_every_piece_and_overlap_by_the_stride(length, size, stride, max_chunks) -> None:
    spans = window_spans(length, size, stride, max_chunks)
    covered = np.zeros(length, bool)
    for start, end in spans:
        assert 0 <= start < end <= length and end - start <= size
        covered[start:end] = True
    assert covered.all()
    assert spans[0][0] == 0 and spans[-1][1] == length
    for (_, end), (start, _) in zip(spans, spans[1:]):
        assert end - start == stride  # consecutive windows share exactly `stride` pieces
    assert len(spans) <= max_chunks


def test_more_windows_than_max_chunks_are_spread_evenly_over_the_whole_text() -> None:
    spans = window_spans(10_000, 100, 25, 4)
    assert spans == [(0, 100), (3300, 3400), (6600, 6700), (9900, 10_000)]


def test_mean_and_max_pooling_against_a_hand_worked_case() -> None:
    logits = np.array([[1.0, -1.0], [3.0, 2.0], [0.0, 4.0], [5.0, 5.0]])  # windows of documents 1, 0, 1, 2
    documents = np.array([1, 0, 1, 2])
    np.testing.assert_allclose(pool(logits, documents, "mean"), [[3.0, 2.0], [0.5, 1.5], [5.0, 5.0]])
    np.testing.assert_allclose(pool(logits, documents, "max"), [[3.0, 2.0], [1.0, 4.0], [5.0, 5.0]])
    values = np.array([1.0, 2.0, 4.0, 0.5])
    np.testing.assert_allclose(pool(values, documents, "max", values=True), [2.0, 2.5, 0.5])  # always the mean


def test_length_stats_give_the_share_longer_than_the_window_and_the_median_length() -> None:
    assert length_stats([10, 130, 500, 20, 128], 128) == {"longer": 0.4, "median": 128.0}


def data_args(*flags: str):
    return parse_args((DataArguments, RunArguments), ["--task", "imdb", "--output-dir", "o", *flags])[0]


def test_the_options_parse_into_a_reading_recorded_in_the_data_options() -> None:
    args = data_args("--long-text", "chunks", "--stride", "16", "--max-chunks", "3", "--chunk-pooling", "max")
    assert args.reading == Reading(CHUNKS, 16, 3, "max", False)
    assert data_args().reading == Reading(HEAD_TAIL)  # the default
    assert data_args("--long-text", "chunks", "--train-chunks").reading.windows_for_training()
    assert {"long_text", "stride", "max_chunks", "chunk_pooling", "train_chunks"} <= set(args.to_dict())


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory):
    from tests.finetune.tiny import make_tiny_bert

    return make_tiny_bert(tmp_path_factory.mktemp("long-text") / "tiny-bert")


BAD_READINGS = [
    (["--stride", "14"], r"--stride 14 must be at least 0 and smaller than the window's 14 pieces of text"),
    (["--max-chunks", "0"], r"--max-chunks must be at least 1 window per text, got 0"),
    (["--long-text", "middle"], r"argument --long-text: invalid choice: 'middle' \(choose from 'head', 'head-tail'"),
    (["--train-chunks"], r"--train-chunks goes with --long-text chunks, not head-tail; add that or drop it"),
    (
        ["--text-pair-column", "second", "--long-text", "chunks"],  # refused before the file is read
        r"--long-text chunks reads one text in windows; a pair task's two texts are read together",
    ),
]


@pytest.mark.parametrize(("flags", "message"), BAD_READINGS)
@pytest.mark.parametrize("side", SIDES)
def test_bad_reading_options_are_one_error_line_and_no_run(side, flags, message, tmp_path, tiny_bert, capsys) -> None:
    train = write_csv(tmp_path / "train.csv", separable_rows(40))
    output = tmp_path / "run"
    argv = ["--train-file", str(train), "--output-dir", str(output), *side_flags(side, tiny_bert), *flags]
    expect_one_error_line(capsys, side_main(side), argv, message)
    assert not output.exists() and not output.with_name("run.partial").exists()


def test_chunks_are_refused_for_a_pair_task() -> None:
    with pytest.raises(OptionsError, match="--long-text chunks reads one text in windows; a pair task"):
        parse_args((DataArguments, RunArguments), ["--task", "stsb", "--output-dir", "o", "--long-text", "chunks"])
    with pytest.raises(OptionsError, match="a pair task"):
        parse_args(
            (DataArguments, RunArguments),
            ["--train-file", "a.csv", "--text-pair-column", "b", "--output-dir", "o", "--long-text", "chunks"],
        )
    assert data_args("--long-text", "head").reading.long_text == HEAD


def test_a_run_recorded_before_the_options_reads_the_head() -> None:
    old = DataSection(options={"task": "sst2", "max_length": 128, "seed": 42}, splits={}, fingerprints={})
    assert old.reading == Reading(HEAD)
    new = DataSection(options=DataArguments(task="imdb", long_text=CHUNKS).to_dict(), splits={}, fingerprints={})
    assert new.reading.long_text == CHUNKS and new.reading.max_chunks == 8
