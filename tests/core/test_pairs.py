"""Parallel-text loading: the pt_en mirror, own files in every format, split carving and bad input."""

from __future__ import annotations

import csv
import hashlib
import json
import logging
import re
from pathlib import Path

import pandas as pd
import pytest

from core.data import DataError
from core.pairs import PairDataArguments, load_pairs, read_pairs
from tests.scratch.translation.toy import toy_pairs, write_tsv


def _own(path: Path, **kwargs) -> PairDataArguments:
    return PairDataArguments(train_file=str(path), source_column="pt", target_column="en", **kwargs)


def test_pt_en_mirror_loads_every_pair_unquoted(pt_en_dir):
    data = load_pairs(PairDataArguments(task="pt_en", data_dir=str(pt_en_dir.parent)))
    assert {name: len(split) for name, split in data.splits.items()} == {
        "train": 17623,
        "validation": 1065,
        "test": 1597,
    }
    assert data.carved == []
    lines = (pt_en_dir / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]
    rows = [line.split("\t") for line in lines]
    assert data.splits["test"].sources == [r[0] for r in rows]  # quote characters stay part of the text
    assert any(s.startswith('"') for s in data.splits["test"].sources + data.splits["test"].targets)
    expected = hashlib.sha256("".join(f"{pt}\t{en}\t{src}\n" for pt, en, src in rows).encode()).hexdigest()
    assert data.fingerprints["test"] == expected
    assert data.leakage == {"validation": 0, "test": 0}
    assert set(data.splits["test"].domains) == {"tatoeba", "tico19", "flores200", "ntrex_ptBR", "ntrex_ptPT"}


def test_missing_splits_are_carved_from_train_seeded_and_disjoint(tmp_path):
    train = write_tsv(tmp_path / "train.tsv", toy_pairs(200))
    first, again = load_pairs(_own(train)), load_pairs(_own(train))
    assert {n: len(s) for n, s in first.splits.items()} == {"train": 162, "validation": 20, "test": 18}
    assert first.carved == ["validation", "test"]
    assert first.fingerprints == again.fingerprints
    other = load_pairs(_own(train, seed=7))
    assert other.fingerprints["validation"] != first.fingerprints["validation"]
    rows = list(zip(first.splits["train"].sources, first.splits["train"].targets))
    held = list(zip(first.splits["validation"].sources, first.splits["validation"].targets))
    assert sorted(rows + held + list(zip(first.splits["test"].sources, first.splits["test"].targets))) == sorted(
        toy_pairs(200)
    )


def test_leakage_counts_test_sources_seen_in_train(tmp_path, caplog):
    pairs = toy_pairs(30)
    train = write_tsv(tmp_path / "train.tsv", pairs)
    test = write_tsv(tmp_path / "test.tsv", pairs[:4] + toy_pairs(6, seed=9))
    validation = write_tsv(tmp_path / "validation.tsv", toy_pairs(5, seed=3))
    with caplog.at_level(logging.WARNING):
        data = load_pairs(_own(train, validation_file=str(validation), test_file=str(test)))
    expected = sum(s in {p[0] for p in pairs} for s, _ in pairs[:4] + toy_pairs(6, seed=9))
    assert data.leakage["test"] == expected >= 4
    assert f"{expected} of 10 test sources also occur in train" in caplog.text


@pytest.mark.parametrize("suffix", [".csv", ".json", ".jsonl", ".parquet"])
def test_every_core_data_format_reads_the_same_pairs(tmp_path, suffix):
    pairs = toy_pairs(12)
    frame = pd.DataFrame({"src": [p[0] for p in pairs], "tgt": [p[1] for p in pairs], "dom": ["a", "b"] * 6})
    path = tmp_path / f"pairs{suffix}"
    if suffix == ".csv":
        frame.to_csv(path, index=False, quoting=csv.QUOTE_ALL)
    elif suffix == ".json":
        path.write_text(json.dumps(frame.to_dict(orient="records")), encoding="utf-8")
    elif suffix == ".jsonl":
        frame.to_json(path, orient="records", lines=True)
    else:
        frame.to_parquet(path)
    split = read_pairs(path, "src", "tgt", "dom")
    assert list(zip(split.sources, split.targets)) == pairs
    assert split.domains == ["a", "b"] * 6


def test_empty_rows_are_dropped_with_a_count(tmp_path, caplog):
    rows = toy_pairs(10) + [("", "cat"), ("gato", " "), ("", "")]
    path = write_tsv(tmp_path / "train.tsv", rows)
    with caplog.at_level(logging.WARNING):
        split = read_pairs(path, "pt", "en")
    assert len(split) == 10
    assert "dropped 3 row(s) with an empty 'pt' or 'en' (data rows 11, 12, 13)" in caplog.text


def test_only_the_first_ten_dropped_rows_are_listed(tmp_path, caplog):
    rows = [("", "cat") if i % 2 else pair for i, pair in enumerate(toy_pairs(30))]
    with caplog.at_level(logging.WARNING):
        read_pairs(write_tsv(tmp_path / "train.tsv", rows), "pt", "en")
    assert "dropped 15 row(s) with an empty 'pt' or 'en' (data rows 2, 4, 6, 8, 10, 12, 14, 16, 18, 20 and 5 more)" in (
        caplog.text
    )


def test_nothing_left_is_an_error(tmp_path):
    path = write_tsv(tmp_path / "train.tsv", [("", "cat"), ("gato", "")])
    with pytest.raises(DataError, match="every one of its 2 rows has an empty 'pt' or 'en'"):
        read_pairs(path, "pt", "en")


def test_a_tsv_of_blank_lines_is_an_empty_file(tmp_path):
    path = tmp_path / "train.tsv"
    path.write_text("\n\n")
    with pytest.raises(DataError, match=r"train\.tsv is empty; it needs a header row"):
        read_pairs(path, "pt", "en")


def test_a_tab_inside_a_field_is_an_error_naming_its_line(tmp_path):
    path = tmp_path / "train.tsv"  # pandas alone would shift the columns and train on ("here", "extra")
    path.write_text("pt\ten\ngato\tcat\ntab\there\textra\nola\thello\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"train\.tsv, line 3: more fields than the header's 2 \(pt, en\)"):
        read_pairs(path, "pt", "en")
    path.write_text("pt\ten\ntab\there\textra\nola\thello\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"train\.tsv, line 2: more fields .*remove the extra separators"):
        read_pairs(path, "pt", "en")


def test_a_field_too_long_for_the_line_scan_still_gives_one_clear_error(tmp_path):
    path = tmp_path / "train.csv"
    path.write_text("pt,en\n" + '"' + "a" * 200_000 + '",cat\nola,hello,extra\nb,c\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"train\.csv, line 3: more fields than the header.s 2 \(pt, en\)"):
        read_pairs(path, "pt", "en")


def test_a_missing_column_lists_the_columns_there_are(tmp_path):
    path = write_tsv(tmp_path / "train.tsv", toy_pairs(5), header=("portuguese", "english"))
    with pytest.raises(DataError, match=r"no column 'pt'\. Its columns are: portuguese, english\. .*--source-column"):
        load_pairs(_own(path))


def test_max_train_samples_takes_a_seeded_subset_in_order(tmp_path):
    path = write_tsv(tmp_path / "train.tsv", toy_pairs(100))
    data = load_pairs(_own(path, max_train_samples=30))
    assert len(data.splits["train"]) == 30
    full = load_pairs(_own(path))
    index = [full.splits["train"].sources.index(s) for s in data.splits["train"].sources]
    assert index == sorted(index)
    assert load_pairs(_own(path, max_train_samples=30)).fingerprints == data.fingerprints


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"train_file": "x.tsv"}, "--source-column and --target-column"),
        ({"task": "pt_en", "train_file": "x.tsv"}, "exactly one of"),
        ({"task": "klingon"}, "Unknown translation task 'klingon'"),
        (
            {"task": "pt_en", "source_column": "en", "target_column": "pt"},
            "--source-column, --target-column are for --train-file: --task pt_en reads its own columns (pt, en)",
        ),
        ({"task": "pt_en", "domain_column": "nope"}, "--domain-column is for --train-file"),
        ({"train_file": "x.tsv", "source_column": "a", "target_column": "a"}, "must differ"),
    ],
)
def test_argument_errors_name_the_problem(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        PairDataArguments(**kwargs)


def test_task_without_a_data_dir_says_where_it_looked_and_where_to_point(monkeypatch, tmp_path):
    monkeypatch.delenv("TEXTCLS_DATA_DIR", raising=False)
    monkeypatch.setattr("core.tasks.ROOT", tmp_path / "project")  # nothing beside it
    message = (
        f"Task 'pt_en' is read from a local mirror, and none was found anywhere: --data-dir and $TEXTCLS_DATA_DIR "
        f"are not set, and there is no {tmp_path / 'shared' / 'data'} or {tmp_path / 'project' / 'data'}; pass "
        "--data-dir (or set TEXTCLS_DATA_DIR) to a folder holding pt_en/train.tsv, validation.tsv and test.tsv."
    )
    with pytest.raises(DataError, match=re.escape(message)):
        load_pairs(PairDataArguments(task="pt_en"))


def test_sources_and_targets_cut_at_max_length_are_counted_and_logged(caplog):
    from core.pairs import PairData, PairSplit

    splits = {  # one piece per character below; a 10,000-character source with no space among them
        "train": PairSplit(["abc", "abcde", "x" * 10_000], ["a", "abcd", "abcdef"]),
        "validation": PairSplit(["ab"], ["a"]),
        "test": PairSplit(["abcd"], ["abcd"]),
    }
    data = PairData(splits, "files (x.tsv)", {"source": "pt", "target": "en", "domain": None})
    assert "truncated" not in data.describe(PairDataArguments(task="pt_en", data_dir="/x"))

    def pieces(texts):
        return [len(text) for text in texts]

    with caplog.at_level(logging.WARNING):
        counted = data.count_cut(pieces, max_length=5)  # at most 4 pieces each, with room for the end id
    assert counted == {
        "train": {"sources": 2, "longest_source": 10_000, "targets": 1, "longest_target": 6},
        "validation": {"sources": 0, "longest_source": 2, "targets": 0, "longest_target": 1},
        "test": {"sources": 0, "longest_source": 4, "targets": 0, "longest_target": 4},
    }
    assert data.describe(PairDataArguments(task="pt_en", data_dir="/x"))["truncated"] == counted
    assert (
        "train: 2 of 3 sources and 1 of 3 targets are longer than --max-length 5 tokens and were cut (the longest "
        "source has 10000 pieces, the longest target 6)." in caplog.text
    )
    assert "validation:" not in caplog.text and "test:" not in caplog.text


@pytest.mark.slow  # the session's tiny translation run, when no other test has trained it yet
def test_a_translation_run_records_what_max_length_cut(tiny_translation_run):
    import sentencepiece as spm

    record = json.loads((tiny_translation_run / "run.json").read_text())
    max_length = record["data"]["options"]["max_length"]
    processor = spm.SentencePieceProcessor(model_file=str(tiny_translation_run / "sentencepiece.model"))
    data = load_pairs(PairDataArguments(**record["data"]["options"]))
    expected = {}
    for name, split in data.splits.items():
        counts = {}
        for side, texts in (("source", split.sources), ("target", split.targets)):
            lengths = [len(ids) for ids in processor.encode([" " + text for text in texts])]  # the tokenizer's prefix
            counts[f"{side}s"] = sum(length > max_length - 1 for length in lengths)
            counts[f"longest_{side}"] = max(lengths)
        expected[name] = counts
    assert record["data"]["truncated"] == expected
