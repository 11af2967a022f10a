"""core.data for pair tasks, multi-label and regression: every way labels are read, the refusals, carving per kind,
fingerprints and leakage over both texts, and the two named tasks of these kinds from the local mirror."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import datasets
import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import train_test_split

from core.args import DataArguments
from core.data import DataError, TaskData, load_task
from core.parsing import parse_args
from tests.conftest import mirror_dir, separable_rows, write_csv, write_frame
from tests.core.bad_inputs import KIND_CASES, pair_rows

MULTI = "multi_label_classification"
EMOTIONS = ["anger", "joy", "surprise"]


def emotion_rows(n: int) -> list[tuple[str, list[str]]]:
    """`n` texts with their set of labels (names sorted), each text unique; every third row has two labels, every
    seventh none."""
    rows = []
    for i, (text, label) in enumerate(separable_rows(n)):
        names = ["joy"] if label == "positive" else ["anger"]
        if i % 3 == 0:
            names = sorted({*names, "surprise"})
        if i % 7 == 0:
            names = []
        rows.append((f"{text} {i}", names))
    return rows


def every_row(data: TaskData) -> dict[str, np.ndarray]:
    """Each text of every split with its target row."""
    return {
        text: target
        for split in data.splits
        for text, target in zip(data.texts(split), data.targets(split), strict=True)
    }


def multi_hot(names: list[str], labels: list[str]) -> list[float]:
    return [float(label in names) for label in labels]


# --- multi-label: every way of writing the labels reads the same ------------------------------------------------


def test_names_joined_by_the_separator(tmp_path: Path) -> None:
    rows = emotion_rows(60)
    train = write_csv(tmp_path / "t.csv", [(text, ";".join(names)) for text, names in rows])
    data = load_task(DataArguments(train_file=str(train), problem=MULTI))
    assert data.problem_type == MULTI and data.headline == "macro_f1" and not data.has_pairs
    assert data.labels == EMOTIONS and data.num_outputs == 3  # sorted, as train holds them
    assert data.splits["train"].features["label"] == datasets.List(datasets.Value("float32"), length=3)
    assert data.targets("test").dtype == np.float32 and data.targets("test").shape == (len(data.splits["test"]), 3)
    got = every_row(data)
    assert len(got) == 60
    for text, names in rows:
        assert got[text].tolist() == multi_hot(names, EMOTIONS), text


def test_ids_joined_by_another_separator_with_a_labels_file(tmp_path: Path) -> None:
    rows = emotion_rows(60)
    labels = tmp_path / "labels.txt"
    labels.write_text("surprise\njoy\nanger\n")
    ids = [(text, " | ".join(str(["surprise", "joy", "anger"].index(n)) for n in names)) for text, names in rows]
    train = write_csv(tmp_path / "t.csv", ids)
    data = load_task(DataArguments(train_file=str(train), problem=MULTI, label_separator="|", labels_file=str(labels)))
    assert data.labels == ["surprise", "joy", "anger"]
    got = every_row(data)
    for text, names in rows:
        assert got[text].tolist() == multi_hot(names, data.labels)


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".parquet"])
def test_a_list_of_labels_reads_as_the_joined_names_do(tmp_path: Path, suffix: str) -> None:
    rows = emotion_rows(60)
    joined = write_csv(tmp_path / "joined.csv", [(text, ";".join(names)) for text, names in rows])
    frame = pd.DataFrame({"text": [text for text, _ in rows], "label": [names for _, names in rows]})
    path = write_frame(frame, tmp_path / f"lists{suffix}")
    from_lists = load_task(DataArguments(train_file=str(path), problem=MULTI))
    from_names = load_task(DataArguments(train_file=str(joined), problem=MULTI))
    assert from_lists.labels == from_names.labels == EMOTIONS
    assert from_lists.fingerprints == from_names.fingerprints


def test_one_0_1_column_per_label(tmp_path: Path) -> None:
    rows = emotion_rows(60)
    wide = [(text, *(int(label in names) for label in EMOTIONS)) for text, names in rows]
    path = write_csv(tmp_path / "wide.csv", wide, header="text," + ",".join(EMOTIONS))
    data = load_task(DataArguments(train_file=str(path), label_columns=["anger,joy", "surprise"]))
    assert data.problem_type == MULTI and data.labels == EMOTIONS
    joined = write_csv(tmp_path / "joined.csv", [(text, ";".join(names)) for text, names in rows])
    assert data.fingerprints == load_task(DataArguments(train_file=str(joined), problem=MULTI)).fingerprints


def test_label_columns_from_the_command_line_as_a_list_or_commas() -> None:
    for flags in (["a", "b", "c"], ["a,b,c"], ["a,b", "c"]):
        (args,) = parse_args((DataArguments,), ["--train-file", "t.csv", "--label-columns", *flags])
        assert args.label_columns == ["a", "b", "c"] and args.problem == MULTI


# --- regression ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_regression_labels_are_numbers(tmp_path: Path, suffix: str) -> None:
    values = [3.5, 1, 0.25, -2, 4.75, 1e-3] * 5
    rows = [(f"text {i}", value) for i, value in enumerate(values)]
    if suffix == ".csv":
        path = write_csv(tmp_path / "t.csv", [(text, f" {value} ") for text, value in rows])
    else:
        path = tmp_path / "t.jsonl"
        path.write_text("".join(json.dumps({"text": t, "label": v}) + "\n" for t, v in rows))
    data = load_task(DataArguments(train_file=str(path), problem="regression"))
    assert data.labels == [] and data.headline == "spearman" and data.num_outputs == 1
    assert data.splits["train"].features["label"] == datasets.Value("float32")
    assert data.targets("train").dtype == np.float32 and data.targets("train").shape == (len(data.splits["train"]),)
    got = every_row(data)
    assert {text: float(target) for text, target in got.items()} == {t: float(np.float32(v)) for t, v in rows}


def test_only_a_single_label_task_has_label_ids(tmp_path: Path) -> None:
    rows = [(f"text {i}", i / 10) for i in range(30)]
    data = load_task(DataArguments(train_file=str(write_csv(tmp_path / "t.csv", rows)), problem="regression"))
    with pytest.raises(ValueError, match=r"this task is regression: use targets\(\)"):
        data.label_ids("train")
    single = load_task(DataArguments(train_file=str(write_csv(tmp_path / "s.csv", separable_rows(40)))))
    assert single.targets("test").dtype == np.int64
    assert np.array_equal(single.targets("test"), single.label_ids("test"))


def test_a_train_split_of_one_value_is_refused(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "t.csv", [(f"text {i}", "2.5") for i in range(30)])
    with pytest.raises(DataError, match=r"^Every label of the train split is 2\.5 \(24 rows\); a regression model"):
        load_task(DataArguments(train_file=str(path), problem="regression"))


# --- pairs -----------------------------------------------------------------------------------------------------


def pair_options(path: Path, **extra) -> DataArguments:
    return DataArguments(
        train_file=str(path), text_column=["sentence1"], text_pair_column="sentence2", label_column="score", **extra
    )


def test_pairs_load_aligned_and_are_recorded(tmp_path: Path) -> None:
    rows = pair_rows(40)
    path = write_csv(tmp_path / "pairs.csv", rows, header="sentence1,sentence2,score")
    args = pair_options(path, problem="regression")
    data = load_task(args)
    assert data.has_pairs and data.pair_column == "sentence2"
    assert data.splits["test"].column_names == ["text", "text_pair", "label"]
    expected = {a: (b, score) for a, b, score in rows}
    for split in data.splits:
        for text, pair, value in zip(data.texts(split), data.text_pairs(split), data.targets(split), strict=True):
            assert (pair, float(value)) == expected[text]
    record = data.describe(args)
    assert record["problem_type"] == "regression" and record["headline_metric"] == "spearman"
    assert record["text_pair_column"] == "sentence2" and record["labels"] == []
    assert record["options"]["text_pair_column"] == "sentence2"
    train_values = [expected[text][1] for text in data.texts("train")]
    assert record["value_range"] == pytest.approx([min(train_values), max(train_values)])


def test_a_pair_task_can_be_single_label(tmp_path: Path) -> None:
    rows = [(a, b, "similar" if score > 2 else "different") for a, b, score in pair_rows(40)]
    data = load_task(pair_options(write_csv(tmp_path / "p.csv", rows, header="sentence1,sentence2,score")))
    assert data.problem_type == "single_label_classification" and data.headline == "accuracy"
    assert data.labels == ["different", "similar"] and data.has_pairs and data.num_outputs == 2
    record = data.describe(pair_options(tmp_path / "p.csv"))
    assert record["text_pair_column"] == "sentence2" and "value_range" not in record  # a regression run's only


def test_rows_with_an_empty_second_text_are_dropped_and_listed(tmp_path: Path, caplog) -> None:
    rows = pair_rows(40)
    rows[2] = (rows[2][0], "", rows[2][2])
    rows[9] = (rows[9][0], "  ", rows[9][2])
    rows[5] = ("", rows[5][1], rows[5][2])
    path = write_csv(tmp_path / "pairs.csv", rows, header="sentence1,sentence2,score")
    with caplog.at_level(logging.WARNING):
        data = load_task(pair_options(path, problem="regression"))
    assert sum(len(split) for split in data.splits.values()) == 37
    assert f"{path}: dropped 3 row(s) with empty or missing text or second text (sentence2) (data rows 3, 6, 10)." in (
        caplog.text
    )


def test_a_text_without_a_pair_column_is_a_single_text(tmp_path: Path) -> None:
    single = load_task(DataArguments(train_file=str(write_csv(tmp_path / "t.csv", separable_rows(40)))))
    assert not single.has_pairs and single.pair_column is None and single.text_pairs("train") is None
    assert single.splits["train"].column_names == ["text", "label"]
    assert single.describe(DataArguments(train_file=str(tmp_path / "t.csv")))["text_pair_column"] is None


def test_a_pair_leaks_only_when_both_texts_recur_in_train(tmp_path: Path, caplog) -> None:
    rows = pair_rows(40)
    header = "sentence1,sentence2,score"
    train = write_csv(tmp_path / "train.csv", rows, header=header)
    (a, b, score), (c, d, _) = rows[0], rows[1]
    test = write_csv(tmp_path / "test.csv", [(a, b, score), (b, a, score), (a, d, score), (c, "new", 1.0)], header)
    with caplog.at_level(logging.WARNING):
        data = load_task(pair_options(train, test_file=str(test), problem="regression"))
    assert data.leakage["test"] == 1  # (a, b) only; swapped or mixed pairs are new inputs
    assert data.inputs("test")[0] == (a, b)
    assert "1 of 4 test text pairs also occur in train" in caplog.text


def test_the_fingerprint_covers_both_texts_and_the_label(tmp_path: Path) -> None:
    rows = pair_rows(40)
    header = "sentence1,sentence2,score"

    def fingerprints(rows, **extra) -> dict[str, str]:
        path = write_csv(tmp_path / f"p{len(list(tmp_path.iterdir()))}.csv", rows, header=header)
        return load_task(pair_options(path, seed=3, **extra)).fingerprints

    base = fingerprints(rows, problem="regression")
    assert fingerprints(rows, problem="regression") == base
    swapped = [(b, a, score) for a, b, score in rows]
    assert fingerprints(swapped, problem="regression")["train"] != base["train"]
    second_changed = [(a, b + " too", score) for a, b, score in rows]
    assert fingerprints(second_changed, problem="regression")["train"] != base["train"]
    rescored = [(a, b, score + 0.25) for a, b, score in rows]
    assert fingerprints(rescored, problem="regression")["train"] != base["train"]
    named = [(a, b, "similar" if score > 2 else "different") for a, b, score in rows]
    assert fingerprints(named)["train"] != fingerprints(named, problem=MULTI)["train"]


# --- carving ---------------------------------------------------------------------------------------------------


def kind_rows(problem: str, n: int) -> list[tuple[str, object]]:
    """`n` rows of unique texts with multi-label names joined by `;`, or with distinct scores."""
    if problem == MULTI:
        return [(text, ";".join(names)) for text, names in emotion_rows(n)]
    return [(a, score + i / 100) for i, (a, _, score) in enumerate(pair_rows(n))]


def carved_rows(n: int, seed: int) -> tuple[list[int], list[int], list[int]]:
    """The rows (indices) of train, validation and test when both are carved from `n` rows at random: scikit-learn's
    seeded `train_test_split`, 10% for validation (seed), then 10% of the rest for test (seed + 1)."""
    rows = np.arange(n)
    rest, validation = train_test_split(rows, test_size=round(n * 0.1), random_state=seed)
    rest = np.sort(rest)
    train, test = train_test_split(rest, test_size=round(len(rest) * 0.1), random_state=seed + 1)
    return np.sort(train).tolist(), np.sort(validation).tolist(), np.sort(test).tolist()


@pytest.mark.parametrize("problem", [MULTI, "regression"])
def test_multi_label_and_regression_splits_are_carved_at_random_seeded(tmp_path: Path, problem: str) -> None:
    rows = kind_rows(problem, 200)
    path = write_csv(tmp_path / "t.csv", rows)
    data = load_task(DataArguments(train_file=str(path), problem=problem, seed=7))
    assert data.carved == ["validation", "test"]
    texts = [text for text, _ in rows]
    for split, indices in zip(("train", "validation", "test"), carved_rows(200, seed=7), strict=True):
        assert data.texts(split) == [texts[i] for i in indices], split
    again = load_task(DataArguments(train_file=str(path), problem=problem, seed=7))
    assert again.fingerprints == data.fingerprints
    assert load_task(DataArguments(train_file=str(path), problem=problem, seed=8)).fingerprints != data.fingerprints


@pytest.mark.parametrize("problem", [MULTI, "regression"])
def test_a_train_subset_is_seeded_and_leaves_the_other_splits(tmp_path: Path, problem: str) -> None:
    rows = kind_rows(problem, 200)
    path = write_csv(tmp_path / "t.csv", rows)
    full = load_task(DataArguments(train_file=str(path), problem=problem))
    subset = load_task(DataArguments(train_file=str(path), problem=problem, max_train_samples=50))
    assert len(subset.splits["train"]) == 50
    order = full.texts("train")
    kept = subset.texts("train")
    assert set(kept) <= set(order) and kept == sorted(kept, key=order.index)  # the train split's order
    assert {k: v for k, v in subset.fingerprints.items() if k != "train"} == {
        k: v for k, v in full.fingerprints.items() if k != "train"
    }
    again = load_task(DataArguments(train_file=str(path), problem=problem, max_train_samples=50))
    assert again.fingerprints == subset.fingerprints


def test_single_label_fingerprints_are_unchanged(tmp_path: Path) -> None:
    """Guards the fingerprints of existing single-label data: the hashes below were computed by the suite's code
    before pairs, multi-label and regression existed, on this fixture with its carved splits. A changed value means
    every single-label run recorded so far would be refused by compare."""
    rows = [(f"text number {i} " + ("good" if i % 3 else "bad"), ["pos", "neg", "mid"][i % 3]) for i in range(120)]
    data = load_task(DataArguments(train_file=str(write_csv(tmp_path / "t.csv", rows)), seed=5))
    assert data.fingerprints == {
        "train": "6dbe01953cd0897733118d60bdc658690bdd25992ad23e136c620a9a93221a03",
        "validation": "48623cac937ea7411fd6aa1fc9f3d7a76995a455bfa499c26d975ffe8f6caadd",
        "test": "6c9356e6d502244605dc7a5946226ff53695eb964548c5d2d29fce2dd53017fa",
    }
    assert data.problem_type == "single_label_classification" and data.headline == "accuracy"


# --- refusals --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", KIND_CASES.values(), ids=KIND_CASES.keys())
def test_each_refusal_names_the_file_row_or_column(tmp_path: Path, case) -> None:
    options, message = case(tmp_path)
    with pytest.raises(ValueError) as raised:
        load_task(DataArguments(**options))
    assert re.match(message, str(raised.value)), str(raised.value)


def test_a_class_name_holding_the_separator_is_kept_when_the_labels_file_names_it(tmp_path: Path) -> None:
    rows = [(text, "good;great" if label == "positive" else "bad") for text, label in separable_rows(40)]
    labels = tmp_path / "labels.txt"
    labels.write_text("bad\ngood;great\n")
    data = load_task(DataArguments(train_file=str(write_csv(tmp_path / "t.csv", rows)), labels_file=str(labels)))
    assert data.labels == ["bad", "good;great"] and data.problem_type == "single_label_classification"


def test_a_label_never_in_train_is_refused_for_multi_label(tmp_path: Path) -> None:
    rows = [(text, ";".join(names)) for text, names in emotion_rows(40)]
    train = write_csv(tmp_path / "train.csv", [(t, n.replace("surprise", "joy")) for t, n in rows])
    labels = tmp_path / "labels.txt"
    labels.write_text("\n".join(EMOTIONS) + "\n")
    test = write_csv(tmp_path / "test.csv", rows[:6])
    with pytest.raises(DataError, match=r"test\.csv: the test split has label 'surprise', which the train split never"):
        load_task(DataArguments(train_file=str(train), test_file=str(test), problem=MULTI, labels_file=str(labels)))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"task": "sst2", "text_pair_column": "b"}, "--text-pair-column goes with --train-file"),
        ({"train_file": "t.csv", "problem": "ranking"}, "--problem must be one of single_label_classification, "),
        ({"train_file": "t.csv", "label_separator": ""}, "--label-separator must be at least one character"),
        ({"train_file": "t.csv", "label_columns": ["a"]}, "--label-columns needs at least two columns, got 1"),
        ({"train_file": "t.csv", "text_pair_column": "text"}, "--text-pair-column 'text' is also a --text-column"),
        ({"train_file": "t.csv", "problem": "regression", "labels_file": "l.txt"}, "a regression task has none"),
    ],
)
def test_contradictory_options_are_refused(options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        DataArguments(**options)


def test_a_named_task_brings_its_kind() -> None:
    assert DataArguments(task="stsb").problem == "regression"
    assert DataArguments(task="goemotions_ekman").problem == MULTI
    assert DataArguments(task="sst2").problem == "single_label_classification"
    assert DataArguments(task="stsb", problem="regression").problem == "regression"


# --- the named tasks -------------------------------------------------------------------------------------------


def test_goemotions_ekman_has_no_hub_copy(tmp_path: Path) -> None:
    with pytest.raises(DataError) as raised:
        load_task(DataArguments(task="goemotions_ekman", data_dir=str(tmp_path)))
    assert str(raised.value) == (
        f"No local mirror of task 'goemotions_ekman' under {tmp_path}. The task is read from a local mirror only "
        "(the hub's google-research-datasets/go_emotions has the 28 fine-grained emotions, not Ekman's 7): point "
        "--data-dir (or TEXTCLS_DATA_DIR) at a folder holding goemotions_ekman/train.csv, validation.csv, test.csv "
        "(columns text,labels) and labels.txt, or pass your files with --train-file."
    )


def test_stsb_from_the_hub_tests_on_its_validation_split(tmp_path: Path, monkeypatch) -> None:
    """The hub's GLUE STS-B, as `datasets` gives it (test scores withheld as -1), read through the hub path: the
    official validation split is the test split, and validation is carved from train."""
    rows = pair_rows(60)

    def split(part: list, withheld: bool = False) -> datasets.Dataset:
        return datasets.Dataset.from_dict(
            {
                "sentence1": [a for a, _, _ in part],
                "sentence2": [b for _, b, _ in part],
                "label": [-1.0 if withheld else score for _, _, score in part],
                "idx": list(range(len(part))),
            }
        )

    hub = datasets.DatasetDict(
        {"train": split(rows[:40]), "validation": split(rows[40:50]), "test": split(rows[50:], withheld=True)}
    )
    monkeypatch.setattr("core.reading.hub_unreachable", lambda: None)
    monkeypatch.setattr(
        datasets, "load_dataset", lambda hub_id, config: hub if (hub_id, config) == ("nyu-mll/glue", "stsb") else None
    )
    data = load_task(DataArguments(task="stsb", data_dir=str(tmp_path)))
    assert data.source == "stsb (hub nyu-mll/glue)" and data.carved == ["validation"]
    assert data.official_splits == {"test": "validation"}
    assert data.texts("test") == [a for a, _, _ in rows[40:50]]
    assert data.text_pairs("test") == [b for _, b, _ in rows[40:50]]
    np.testing.assert_allclose(data.targets("test"), [score for _, _, score in rows[40:50]])
    train, validation = train_test_split(np.arange(40), test_size=4, random_state=42)  # the seed rule of any carve
    assert data.texts("validation") == [rows[i][0] for i in np.sort(validation)]
    assert data.texts("train") == [rows[i][0] for i in np.sort(train)]


@pytest.fixture
def kinds_mirror() -> Path:
    found = mirror_dir("goemotions_ekman/train.csv")
    if found is None or not (found / "stsb" / "train.csv").is_file():
        pytest.skip("no local mirror of goemotions_ekman/ and stsb/: set TEXTCLS_DATA_DIR to a folder holding them")
    return found


def test_goemotions_ekman_from_the_mirror(kinds_mirror: Path) -> None:
    data = load_task(DataArguments(task="goemotions_ekman", data_dir=str(kinds_mirror)))
    assert data.problem_type == MULTI and not data.has_pairs and data.carved == []
    assert data.labels == ["anger", "disgust", "fear", "joy", "neutral", "sadness", "surprise"]
    assert {name: len(split) for name, split in data.splits.items()} == {
        "train": 43410,
        "validation": 5426,
        "test": 5427,
    }
    train = data.targets("train")
    # SOURCE.md's statistics: rows per label, and rows with 1 / 2 / 3 labels
    assert train.sum(axis=0).astype(int).tolist() == [5579, 793, 726, 17410, 14219, 3263, 5367]
    assert np.bincount(train.sum(axis=1).astype(int)).tolist() == [0, 39555, 3763, 92]
    assert np.bincount(data.targets("test").sum(axis=1).astype(int)).tolist() == [0, 4968, 451, 8]


def test_stsb_from_the_mirror(kinds_mirror: Path) -> None:
    data = load_task(DataArguments(task="stsb", data_dir=str(kinds_mirror)))
    assert data.problem_type == "regression" and data.pair_column == "sentence2" and data.labels == []
    # GLUE's test scores are hidden: the official validation split is the test split, validation comes from train
    assert data.carved == ["validation"] and data.official_splits == {"test": "validation"}
    sizes = {name: len(split) for name, split in data.splits.items()}
    assert sizes == {"train": 5749 - 575, "validation": 575, "test": 1500}
    scores = np.concatenate([data.targets("train"), data.targets("validation")])
    assert scores.min() >= 0 and scores.max() <= 5
    assert round(float(scores.mean()), 3) == 2.701 and round(float(data.targets("test").mean()), 3) == 2.364
    assert data.texts("test") == pd.read_csv(kinds_mirror / "stsb" / "validation.csv").sentence1.tolist()
    again = load_task(DataArguments(task="stsb", data_dir=str(kinds_mirror)))
    assert again.fingerprints == data.fingerprints
