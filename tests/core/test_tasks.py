"""core.tasks: where the local task mirrors are found without any option, in order."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.args import DataArguments
from core.data import load_task
from core.tables import DataError
from core.tasks import find_data_dir, get_task
from tests.conftest import mirror_dir


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checkout at tmp/project with nothing beside it, no $TEXTCLS_DATA_DIR, and the working directory elsewhere."""
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.delenv("TEXTCLS_DATA_DIR", raising=False)
    monkeypatch.setattr("core.tasks.ROOT", root)
    (tmp_path / "elsewhere" / "data").mkdir(parents=True)  # beside the working directory, not the project
    monkeypatch.chdir(tmp_path / "elsewhere")
    return root


def test_the_environment_comes_first(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project.parent / "shared" / "data").mkdir(parents=True)
    monkeypatch.setenv("TEXTCLS_DATA_DIR", "/mirror")
    assert find_data_dir() == "/mirror"


def test_then_shared_data_beside_the_project_then_its_own_data(project: Path) -> None:
    assert find_data_dir() is None  # ./data beside the working directory does not count
    (project / "data").mkdir()
    assert find_data_dir() == str(project / "data")
    (project.parent / "shared" / "data").mkdir(parents=True)
    assert find_data_dir() == str(project.parent / "shared" / "data")


def test_the_options_take_what_is_found_unless_given(project: Path) -> None:
    assert DataArguments(task="sst2").data_dir is None
    (project / "data").mkdir()
    assert DataArguments(task="sst2").data_dir == str(project / "data")
    assert DataArguments(task="sst2", data_dir="/other").data_dir == "/other"


# --- SICK: one mirror, two named tasks (entailment and relatedness) -----------------------------------------------

SICK_ROWS = [
    ("A man is playing a guitar", "A person plays an instrument", "entailment", 4.1),
    ("A dog runs in the park", "No dog is running", "contradiction", 3.2),
    ("Two kids are eating", "A woman is cooking", "neutral", 1.5),
    ("A cat sleeps on the sofa", "A cat is sleeping", "entailment", 4.8),
    ("Nobody is swimming", "A boy is swimming in a pool", "contradiction", 3.6),
    ("A girl reads a book", "The sky is blue", "neutral", 1.0),
] * 3


def sick_mirror(folder: Path) -> Path:
    """`folder/sick/` laid out as the staged mirror: three CSV splits with both targets, and labels.txt."""
    sick = folder / "sick"
    sick.mkdir(parents=True)
    frame = pd.DataFrame(SICK_ROWS, columns=["sentence1", "sentence2", "label", "relatedness"])
    for split, rows in (("train", frame), ("validation", frame[:6]), ("test", frame[6:12])):
        rows.to_csv(sick / f"{split}.csv", index=False)
    (sick / "labels.txt").write_text("contradiction\nentailment\nneutral\n")
    return folder


def test_sick_reads_entailment_classes_of_pairs(tmp_path: Path) -> None:
    data = load_task(DataArguments(task="sick", data_dir=str(sick_mirror(tmp_path))))
    assert data.problem_type == "single_label_classification" and data.pair_column == "sentence2"
    assert data.labels == ["contradiction", "entailment", "neutral"] and data.carved == []
    assert data.texts("train") == [a for a, _, _, _ in SICK_ROWS]
    assert data.text_pairs("train") == [b for _, b, _, _ in SICK_ROWS]
    assert [data.labels[i] for i in data.label_ids("train")] == [label for _, _, label, _ in SICK_ROWS]


def test_sick_relatedness_reads_the_same_pairs_as_regression(tmp_path: Path) -> None:
    data = load_task(DataArguments(task="sick_relatedness", data_dir=str(sick_mirror(tmp_path))))
    assert data.problem_type == "regression" and data.labels == []  # labels.txt names the other task's classes
    assert data.text_pairs("test") == [b for _, b, _, _ in SICK_ROWS[6:12]]
    np.testing.assert_allclose(data.targets("train"), [score for _, _, _, score in SICK_ROWS])
    value_range = data.describe(DataArguments(task="sick_relatedness", data_dir=str(tmp_path)))["value_range"]
    np.testing.assert_allclose(value_range, [1.0, 4.8], rtol=1e-6)


def test_sick_relatedness_without_a_mirror_names_the_sick_folder(tmp_path: Path) -> None:
    with pytest.raises(
        DataError,
        match=r"holding sick/train\.csv, validation\.csv, test\.csv \(columns "
        r"sentence1,sentence2,relatedness\)",
    ):
        load_task(DataArguments(task="sick_relatedness", data_dir=str(tmp_path)))


def test_sick_from_the_staged_mirror() -> None:
    found = mirror_dir("sick/train.csv")
    if found is None:
        pytest.skip("no local mirror of sick/: set TEXTCLS_DATA_DIR to a folder holding it")
    data = load_task(DataArguments(task="sick", data_dir=str(found)))
    sizes = {name: len(split) for name, split in data.splits.items()}
    assert sizes == {"train": 4439, "validation": 495, "test": 4906}  # SOURCE.md's counts
    test = pd.read_csv(found / "sick" / "test.csv")
    majority = test.label.value_counts(normalize=True)
    assert majority.idxmax() == "neutral" and round(float(majority.max()), 2) == 0.57  # SOURCE.md's majority class
    assert np.mean(data.label_ids("test") == data.labels.index("neutral")) == majority.max()
    relatedness = load_task(DataArguments(task="sick_relatedness", data_dir=str(found)))
    assert relatedness.fingerprints["test"] != data.fingerprints["test"]  # the same pairs, other targets
    np.testing.assert_allclose(relatedness.targets("test"), test.relatedness.to_numpy(), rtol=1e-6)


def test_stsb_takes_its_test_split_from_the_official_validation_split() -> None:
    assert get_task("stsb").official_splits == {"test": "validation"}
    assert get_task("sick").official_splits == {} and get_task("sick_relatedness").folder == "sick"


def test_imdb_reads_its_mirror_and_carves_a_stratified_validation_split_from_train(tmp_path: Path) -> None:
    folder = tmp_path / "imdb"
    folder.mkdir()
    # as the mirror lays them out: every negative review, then every positive one; no validation.csv
    rows = [(f"review {i} " + "plot " * (i % 7), "neg") for i in range(50)]
    rows += [(f"review {i} " + "acting " * (i % 5), "pos") for i in range(50, 100)]
    for split in ("train", "test"):
        pd.DataFrame(rows, columns=["text", "label"]).to_csv(folder / f"{split}.csv", index=False)
    (folder / "labels.txt").write_text("neg\npos\n")
    data = load_task(DataArguments(task="imdb", data_dir=str(tmp_path)))
    assert get_task("imdb").hub_id == "stanfordnlp/imdb" and data.labels == ["neg", "pos"]
    assert data.carved == ["validation"] and len(data.splits["test"]) == 100
    assert np.bincount(data.label_ids("validation")).tolist() == [5, 5]  # stratified, not the tail's positives
    assert np.bincount(data.label_ids("train")).tolist() == [45, 45]
    assert set(data.texts("validation")).isdisjoint(data.texts("train"))
    assert data.reading.long_text == "head-tail"


def test_imdb_from_the_staged_mirror() -> None:
    if mirror_dir("imdb/train.csv") is None:
        pytest.skip("no local imdb mirror")
    data = load_task(DataArguments(task="imdb", data_dir=str(mirror_dir("imdb/train.csv"))))
    assert {name: len(split) for name, split in data.splits.items()} == {
        "train": 22_500,
        "validation": 2_500,
        "test": 25_000,
    }
    assert np.bincount(data.label_ids("validation")).tolist() == [1_250, 1_250]
