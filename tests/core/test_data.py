from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.args import DataArguments
from core.data import DataError, load_task
from tests.conftest import separable_rows, write_csv


def files(**kwargs) -> DataArguments:
    return DataArguments(**kwargs)


# --- the local SST-2 and emotion mirrors ------------------------------------------------------------------


def test_sst2_mirror_rows_labels_and_stable_fingerprints(data_dir: Path) -> None:
    first = load_task(DataArguments(task="sst2", data_dir=str(data_dir)))
    assert first.labels == ["negative", "positive"]
    assert {name: len(split) for name, split in first.splits.items()} == {
        "train": 67349,
        "validation": 872,
        "test": 1821,
    }
    assert np.bincount(first.label_ids("test")).tolist() == [912, 909]
    second = load_task(DataArguments(task="sst2", data_dir=str(data_dir)))
    assert first.fingerprints == second.fingerprints
    assert len(set(first.fingerprints.values())) == 3


def test_emotion_mirror_labels(data_dir: Path) -> None:
    data = load_task(DataArguments(task="emotion", data_dir=str(data_dir)))
    assert data.labels == ["sadness", "joy", "love", "anger", "fear", "surprise"]
    assert [len(data.splits[s]) for s in ("train", "validation", "test")] == [16000, 2000, 2000]


def test_changing_one_row_changes_only_that_fingerprint(data_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "sst2"
    copy.mkdir()
    for name in ("train.csv", "validation.csv", "test.csv", "labels.txt"):
        (copy / name).write_bytes((data_dir / "sst2" / name).read_bytes())
    before = load_task(DataArguments(task="sst2", data_dir=str(tmp_path))).fingerprints
    frame = pd.read_csv(copy / "test.csv", dtype=object, keep_default_na=False)
    frame.loc[5, "text"] = frame.loc[5, "text"] + " indeed"
    frame.to_csv(copy / "test.csv", index=False)
    after = load_task(DataArguments(task="sst2", data_dir=str(tmp_path))).fingerprints
    assert after["test"] != before["test"]
    assert after["train"] == before["train"] and after["validation"] == before["validation"]


def test_subset_keeps_class_proportions_and_test_split(data_dir: Path) -> None:
    full = load_task(DataArguments(task="emotion", data_dir=str(data_dir)))
    subset = load_task(DataArguments(task="emotion", data_dir=str(data_dir), max_train_samples=2000))
    assert len(subset.splits["train"]) == 2000
    full_share = np.bincount(full.label_ids("train"), minlength=6) / len(full.splits["train"])
    sub_share = np.bincount(subset.label_ids("train"), minlength=6) / 2000
    assert np.abs(full_share - sub_share).max() <= 0.01
    assert subset.fingerprints["test"] == full.fingerprints["test"]
    assert set(subset.texts("train")) <= set(full.texts("train"))
    again = load_task(DataArguments(task="emotion", data_dir=str(data_dir), max_train_samples=2000))
    assert again.fingerprints == subset.fingerprints


# --- the user's own files -----------------------------------------------------------------------------------


def test_carved_splits_are_stratified_disjoint_and_seeded(tiny_csv: Path) -> None:
    data = load_task(files(train_file=str(tiny_csv)))
    assert data.carved == ["validation", "test"]
    assert data.labels == ["negative", "positive"]
    sizes = {name: len(split) for name, split in data.splits.items()}
    assert sizes == {"train": 162, "validation": 20, "test": 18}
    for name in ("validation", "test"):
        assert np.bincount(data.label_ids(name)).tolist() == [sizes[name] // 2] * 2
    # Rows, not texts, are disjoint: the tiny fixture repeats texts.
    assert sum(sizes.values()) == 200
    assert load_task(files(train_file=str(tiny_csv))).fingerprints == data.fingerprints
    assert load_task(files(train_file=str(tiny_csv), seed=7)).fingerprints != data.fingerprints


def test_carved_splits_share_no_row_with_train(tmp_path: Path) -> None:
    rows = [(f"review number {i} " + text, label) for i, (text, label) in enumerate(separable_rows(300))]
    data = load_task(files(train_file=str(write_csv(tmp_path / "t.csv", rows))))
    train = set(data.texts("train"))
    assert not train & set(data.texts("validation"))
    assert not train & set(data.texts("test"))
    assert not set(data.texts("validation")) & set(data.texts("test"))


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".json", ".jsonl", ".parquet"])
def test_every_file_format_reads_the_same(tmp_path: Path, suffix: str) -> None:
    frame = pd.DataFrame(separable_rows(60), columns=["review", "sentiment"])
    frame["title"] = "t"
    path = tmp_path / f"train{suffix}"
    if suffix == ".csv":
        frame.to_csv(path, index=False)
    elif suffix == ".tsv":
        frame.to_csv(path, index=False, sep="\t")
    elif suffix == ".json":
        path.write_text(json.dumps(frame.to_dict(orient="records")))
    elif suffix == ".jsonl":
        frame.to_json(path, orient="records", lines=True)
    else:
        frame.to_parquet(path)
    data = load_task(files(train_file=str(path), text_column=["title", "review"], label_column="sentiment"))
    assert sum(len(s) for s in data.splits.values()) == 60
    assert all(text.startswith("t ") for text in data.texts("train"))


def test_integer_labels_with_labels_file(tmp_path: Path) -> None:
    rows = [(text, int(label == "positive")) for text, label in separable_rows(40)]
    train = write_csv(tmp_path / "train.csv", rows)
    labels = tmp_path / "labels.txt"
    labels.write_text("bad\ngood\n")
    data = load_task(files(train_file=str(train), labels_file=str(labels)))
    assert data.labels == ["bad", "good"]
    by_text = dict(rows)
    for text, label in zip(data.texts("train"), data.label_ids("train")):
        assert label == by_text[text]


def test_integer_labels_without_labels_file_sort_numerically(tmp_path: Path) -> None:
    rows = [(f"text {i}", [2, 10, 1][i % 3]) for i in range(30)]
    data = load_task(files(train_file=str(write_csv(tmp_path / "t.csv", rows))))
    assert data.labels == ["1", "2", "10"]


def test_validation_and_test_files_are_used_as_given(tmp_path: Path) -> None:
    train = write_csv(tmp_path / "train.csv", separable_rows(40))
    valid = write_csv(tmp_path / "valid.csv", separable_rows(8, seed=1))
    test = write_csv(tmp_path / "test.csv", separable_rows(6, seed=2))
    data = load_task(files(train_file=str(train), validation_file=str(valid), test_file=str(test)))
    assert [len(data.splits[s]) for s in ("train", "validation", "test")] == [40, 8, 6]
    assert data.carved == []


def test_unlabelled_test_split_counts_as_absent(tmp_path: Path) -> None:
    train = write_csv(tmp_path / "train.csv", separable_rows(60))
    test = write_csv(tmp_path / "test.csv", [(text, -1) for text, _ in separable_rows(6)])
    data = load_task(files(train_file=str(train), test_file=str(test)))
    assert data.carved == ["validation", "test"]


def test_empty_texts_are_dropped_and_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    rows = separable_rows(40)
    rows[3] = ("", "positive")
    rows[7] = ("   ", "negative")
    with caplog.at_level(logging.WARNING):
        data = load_task(files(train_file=str(write_csv(tmp_path / "t.csv", rows))))
    assert sum(len(s) for s in data.splits.values()) == 38
    assert "dropped 2 row(s)" in caplog.text and "4, 8" in caplog.text


def test_test_texts_seen_in_train_are_counted(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    train = write_csv(tmp_path / "train.csv", separable_rows(40))
    test = write_csv(tmp_path / "test.csv", separable_rows(4))
    with caplog.at_level(logging.WARNING):
        load_task(files(train_file=str(train), test_file=str(test)))
    assert "of 4 test texts also occur in train" in caplog.text


# --- bad input: each a clear error ------------------------------------------------------------------------


def expect_error(match: str, **kwargs) -> None:
    with pytest.raises((DataError, ValueError), match=match):
        load_task(DataArguments(**kwargs))


def test_missing_file(tmp_path: Path) -> None:
    expect_error(r"nope\.csv does not exist", train_file=str(tmp_path / "nope.csv"))


def test_unknown_task() -> None:
    expect_error(r"Unknown task 'sst3'.*sst2", task="sst3")


def test_unknown_column_lists_the_columns(tiny_csv: Path) -> None:
    expect_error(r"no column 'review'.*columns are: text, label", train_file=str(tiny_csv), text_column=["review"])


def test_nothing_left_after_dropping_empty_texts(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "t.csv", [("", "a"), (" ", "b")])
    expect_error(r"every row has empty or missing text", train_file=str(path))


def test_label_outside_the_label_set_names_value_and_row(tmp_path: Path) -> None:
    rows = separable_rows(20)
    rows[4] = (rows[4][0], "neutral")
    labels = tmp_path / "labels.txt"
    labels.write_text("negative\npositive\n")
    path = write_csv(tmp_path / "t.csv", rows)
    expect_error(r"row 5 has label 'neutral'", train_file=str(path), labels_file=str(labels))


def test_train_split_with_one_class(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "t.csv", [(f"text {i}", "positive") for i in range(30)])
    expect_error(r"one class only \('positive'\)", train_file=str(path))


def test_file_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    path = tmp_path / "latin1.csv"
    path.write_bytes("text,label\ncaf\xe9 cr\xe8me,positive\n".encode("latin-1"))
    expect_error(r"latin1\.csv is not UTF-8", train_file=str(path))


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.csv"
    path.write_text("")
    expect_error(r"empty\.csv is empty", train_file=str(path))


def test_header_only_file(tmp_path: Path) -> None:
    path = tmp_path / "header.csv"
    path.write_text("text,label\n")
    expect_error(r"header\.csv has no rows", train_file=str(path))


def test_same_text_column_twice(tiny_csv: Path) -> None:
    expect_error(r"--text-column names 'text' more than once", train_file=str(tiny_csv), text_column=["text", "text"])


def test_validation_label_never_seen_in_train(tmp_path: Path) -> None:
    train = write_csv(tmp_path / "train.csv", separable_rows(40))
    valid = write_csv(tmp_path / "valid.csv", [*separable_rows(4), ("meh", "neutral")])
    labels = tmp_path / "labels.txt"
    labels.write_text("negative\npositive\nneutral\n")
    expect_error(
        r"validation split has label 'neutral', which the train split never has",
        train_file=str(train),
        validation_file=str(valid),
        labels_file=str(labels),
    )


def test_unseen_string_label_without_labels_file(tmp_path: Path) -> None:
    train = write_csv(tmp_path / "train.csv", separable_rows(40))
    test = write_csv(tmp_path / "test.csv", [*separable_rows(4), ("meh", "neutral")])
    expect_error(r"test\.csv: row 5 has label 'neutral'", train_file=str(train), test_file=str(test))


def test_missing_label_names_the_row(tmp_path: Path) -> None:
    rows = separable_rows(20)
    rows[2] = (rows[2][0], "")
    expect_error(r"row 3 of the train split has no label", train_file=str(write_csv(tmp_path / "t.csv", rows)))


def test_task_and_files_together_are_refused(tiny_csv: Path) -> None:
    expect_error(r"exactly one of --task NAME or --train-file", task="sst2", train_file=str(tiny_csv))


def test_offline_hub_failure_says_how_to_use_local_files(tmp_path: Path) -> None:
    expect_error(r"Could not load task 'trec'.*--data-dir.*--train-file", task="trec", data_dir=str(tmp_path))
