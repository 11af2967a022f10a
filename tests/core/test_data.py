from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.args import DataArguments
from core.data import DataError, load_task
from tests.conftest import separable_rows, write_csv, write_frame
from tests.core.bad_inputs import CASES


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
    assert len(subset.splits["train"]) == len(subset.texts("train")) == len(subset.label_ids("train")) == 2000
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


def test_a_carved_validation_split_is_capped_and_the_rest_stays_in_train(tmp_path: Path, monkeypatch, caplog) -> None:
    import core.data

    monkeypatch.setattr(core.data, "MAX_CARVED_VALIDATION", 15)  # 10% of 300 rows would be 30
    rows = [(f"review number {i} " + text, label) for i, (text, label) in enumerate(separable_rows(300))]
    args = files(train_file=str(write_csv(tmp_path / "t.csv", rows)))
    with caplog.at_level(logging.INFO, logger="core.data"):
        data = load_task(args)
    assert {name: len(split) for name, split in data.splits.items()} == {"train": 257, "validation": 15, "test": 28}
    assert "holding out 15 stratified training rows, not 10% (30); the rest stays in train" in caplog.text
    assert data.describe(args)["carved_validation_cap"] == 15
    monkeypatch.setattr(core.data, "MAX_CARVED_VALIDATION", 10_000)
    assert "carved_validation_cap" not in load_task(args).describe(args)


def test_each_split_is_fingerprinted_once(tiny_csv: Path, monkeypatch) -> None:
    import core.data

    hashed = []
    fingerprint = core.data.fingerprint
    monkeypatch.setattr(
        core.data, "fingerprint", lambda split, labels: hashed.append(len(split)) or fingerprint(split, labels)
    )
    args = files(train_file=str(tiny_csv))
    data = load_task(args)
    first = data.fingerprints
    assert data.describe(args)["fingerprints"] == data.fingerprints == first
    assert sorted(hashed) == sorted(len(split) for split in data.splits.values())


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
    path = write_frame(frame, tmp_path / f"train{suffix}")
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
        data = load_task(files(train_file=str(train), test_file=str(test)))
    shared = sum(text in data.texts("train") for text, _ in separable_rows(4))
    assert shared > 0 and f"{shared} of 4 test texts also occur in train" in caplog.text
    assert data.describe(files(train_file=str(train), test_file=str(test)))["leakage"]["test"] == shared


# --- messy but valid files ---------------------------------------------------------------------------------


def write_bytes(path: Path, text: str, prefix: bytes = b"") -> Path:
    path.write_bytes(prefix + text.encode("utf-8"))
    return path


def rows_csv(rows: list[tuple[str, str]], sep: str = ",", newline: str = "\n") -> str:
    return newline.join([f"text{sep}label", *(f"{text}{sep}{label}" for text, label in rows)]) + newline


def test_a_utf8_byte_order_mark_is_not_part_of_the_first_column(tmp_path: Path) -> None:
    rows = separable_rows(40)
    path = write_bytes(tmp_path / "bom.csv", rows_csv(rows), prefix=b"\xef\xbb\xbf")
    data = load_task(files(train_file=str(path)))
    assert sum(len(split) for split in data.splits.values()) == 40
    assert sorted(data.texts("train") + data.texts("validation") + data.texts("test")) == sorted(t for t, _ in rows)


def test_windows_line_endings_read_like_unix_ones(tmp_path: Path) -> None:
    rows = separable_rows(40)
    crlf = load_task(files(train_file=str(write_bytes(tmp_path / "crlf.csv", rows_csv(rows, newline="\r\n")))))
    unix = load_task(files(train_file=str(write_bytes(tmp_path / "unix.csv", rows_csv(rows)))))
    assert crlf.fingerprints == unix.fingerprints


def test_a_quoted_newline_stays_inside_its_text(tmp_path: Path) -> None:
    rows = [*separable_rows(39), ("two lines\nof review", "positive")]
    path = write_csv(tmp_path / "quoted.csv", rows)
    assert '"two lines\nof review"' in path.read_text()
    data = load_task(files(train_file=str(path)))
    texts = data.texts("train") + data.texts("validation") + data.texts("test")
    assert len(texts) == 40 and "two lines\nof review" in texts


def test_a_null_text_in_jsonl_is_dropped_like_an_empty_one(tmp_path: Path, caplog) -> None:
    lines = [json.dumps({"text": text, "label": label}) for text, label in separable_rows(40)]
    lines[6] = json.dumps({"text": None, "label": "positive"})
    path = tmp_path / "train.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with caplog.at_level(logging.WARNING):
        data = load_task(files(train_file=str(path)))
    assert sum(len(split) for split in data.splits.values()) == 39
    assert "dropped 1 row(s)" in caplog.text and "data row 7)" in caplog.text


def test_labels_with_stray_spaces_are_the_same_labels(tmp_path: Path) -> None:
    rows = separable_rows(40)
    padded = [(text, f"  {label} " if i % 3 == 0 else label) for i, (text, label) in enumerate(rows)]
    spaced = load_task(files(train_file=str(write_csv(tmp_path / "spaced.csv", padded))))
    clean = load_task(files(train_file=str(write_csv(tmp_path / "clean.csv", rows))))
    assert spaced.labels == clean.labels == ["negative", "positive"]
    assert spaced.fingerprints == clean.fingerprints


def test_a_semicolon_separated_csv_is_read_with_its_separator(tmp_path: Path, caplog) -> None:
    rows = [(text.replace(" ", ", ", 1), label) for text, label in separable_rows(40)]  # commas inside texts
    with caplog.at_level(logging.INFO):
        semicolon = load_task(files(train_file=str(write_bytes(tmp_path / "semi.csv", rows_csv(rows, sep=";")))))
    comma = load_task(files(train_file=str(write_csv(tmp_path / "comma.csv", rows))))
    assert semicolon.fingerprints == comma.fingerprints
    assert "reading it as ';'-separated" in caplog.text


# --- bad input: each a clear error ------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_bad_data_is_a_clear_error(tmp_path: Path, case) -> None:
    options, message = case(tmp_path)
    with pytest.raises(ValueError, match=message):
        load_task(DataArguments(**options))


# --- no network ------------------------------------------------------------------------------------------


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hub not set offline and no proxy, its address one where nothing listens: a machine with no network."""
    import datasets
    from huggingface_hub import constants

    from core.reading import PROXY_VARIABLES

    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:9")
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def test_without_a_network_a_task_with_no_mirror_fails_at_once(no_network, tmp_path: Path) -> None:
    import re
    import time

    start = time.perf_counter()
    with pytest.raises(DataError) as raised:
        load_task(DataArguments(task="trec", data_dir=str(tmp_path)))
    assert time.perf_counter() - start < 5  # no retries
    expected = (
        f"No local mirror of task 'trec' under {tmp_path}, and the Hugging Face hub cannot be reached (127.0.0.1: "
        "Connection refused). Without a network, point --data-dir (or TEXTCLS_DATA_DIR) at a folder holding "
        "trec/train.csv"
    )
    assert str(raised.value).startswith(expected), str(raised.value)
    assert re.search(r"or pass your files with --train-file\.$", str(raised.value))


def test_a_hub_that_does_not_answer_counts_as_unreachable(no_network, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket
    import time

    from core.reading import hub_unreachable

    def never_answers(*args, **kwargs):
        time.sleep(3)
        raise OSError("too late")

    monkeypatch.setattr(socket, "create_connection", never_answers)
    start = time.perf_counter()
    assert hub_unreachable(seconds=0.2) == "127.0.0.1: no answer within 0.2 s"
    assert time.perf_counter() - start < 1
