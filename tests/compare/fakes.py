"""In-memory stand-ins for trained runs: fake classifiers answering from fixed tables, and run directories whose
run.json describes real tiny splits (so fingerprints and data loading are real), for each kind of task: single
label (`tiny_data`), multi-label (`multilabel_data`) and regression on text pairs (`pair_regression_data`)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from compare.kinds import reported
from core import kinds
from core.args import DataArguments
from core.data import load_task
from core.kinds import MULTI_LABEL, REGRESSION
from core.multilabel import choose_thresholds
from core.record import RunRecord, read_run, write_run

LABELS = ["neg", "neu", "pos"]
EMOTIONS = ["anger", "fear", "joy"]


class FakeClassifier:
    """The `Classifier` protocol (docs/formats.md) answering from a table: each input (a text, or a `(text,
    text_pair)` pair) to its probabilities, or to its value for regression. Its kind, pairs and thresholds are its
    run.json's (`record`)."""

    def __init__(self, side: str, labels: list[str], record: RunRecord, table: dict) -> None:
        self.name, self.side, self.labels, self.record, self.table = side, side, list(labels), record, table
        self.kind, self.has_pairs, self.thresholds = record.kind, record.has_pairs, record.thresholds

    def check(self, texts: list[str], text_pairs: list[str] | None, want: str) -> None:
        """Refuses inputs or a call a real classifier refuses: pairs exactly for a pair task, one per text, and the
        outputs (`probabilities` or `values`) its kind gives."""
        if self.has_pairs != (text_pairs is not None) or (text_pairs is not None and len(text_pairs) != len(texts)):
            raise ValueError("pass text_pairs, one per text, exactly for a pair task.")
        if want != self.kind.outputs:
            raise ValueError(f"a {self.kind.name} model gives {self.kind.outputs}, not {want}.")

    def answers(self, texts: list[str], text_pairs: list[str] | None, want: str) -> list:
        self.check(texts, text_pairs, want)
        return [self.table[key] for key in (texts if text_pairs is None else list(zip(texts, text_pairs)))]

    def predict(self, texts: list[str], text_pairs: list[str] | None = None) -> np.ndarray:
        given = self.predict_values if self.kind.gives_values else self.predict_proba
        return self.kind.decide(given(texts, text_pairs), self.thresholds)

    def predict_proba(self, texts: list[str], text_pairs: list[str] | None = None) -> np.ndarray:
        rows = self.answers(texts, text_pairs, "probabilities")
        return np.asarray(rows, np.float32).reshape(len(texts), len(self.labels))

    def predict_values(self, texts: list[str], text_pairs: list[str] | None = None) -> np.ndarray:
        return np.asarray(self.answers(texts, text_pairs, "values"), np.float32)


def write_split(path: Path, n: int, offset: int, labels: list[str] = LABELS, with_labels: bool = True) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", "label"])
        for i in range(n):
            writer.writerow(
                [
                    f"example {offset + i} about {labels[i % len(labels)]}",
                    labels[i % len(labels)] if with_labels else "",
                ]
            )
    return path


def tiny_data(folder: Path, n_test: int = 240, **kwargs) -> DataArguments:
    """A three-class task in three CSV files: 300 train, 60 validation, `n_test` test rows."""
    folder.mkdir(parents=True, exist_ok=True)
    return DataArguments(
        train_file=str(write_split(folder / "train.csv", 300, 0)),
        validation_file=str(write_split(folder / "validation.csv", 60, 1000)),
        test_file=str(write_split(folder / "test.csv", n_test, 2000)),
        **kwargs,
    )


def multilabel_data(folder: Path, n_test: int = 200, **kwargs) -> DataArguments:
    """A multi-label task in three CSV files (`labels`: names joined by `;`, some rows with none, some with two):
    300 train, 60 validation, `n_test` test rows."""
    folder.mkdir(parents=True, exist_ok=True)
    sets = [["joy"], ["anger"], [], ["anger", "fear"], ["fear"], ["joy", "fear"], ["joy"]]

    def write(name: str, n: int, offset: int) -> str:
        rows = [
            (f"message {offset + i} feeling {'+'.join(sets[i % 7]) or 'calm'}", ";".join(sets[i % 7])) for i in range(n)
        ]
        return str(write_rows(folder / name, ["text", "labels"], rows))

    return DataArguments(
        train_file=write("train.csv", 300, 0),
        validation_file=write("validation.csv", 60, 1000),
        test_file=write("test.csv", n_test, 2000),
        label_column="labels",
        problem=MULTI_LABEL,
        **kwargs,
    )


def pair_regression_data(folder: Path, n_test: int = 200, **kwargs) -> DataArguments:
    """A similarity task on text pairs (`sentence1`, `sentence2`, `score` in 0..5), in three CSV files: 300 train,
    60 validation, `n_test` test rows."""
    folder.mkdir(parents=True, exist_ok=True)
    words = ["cat", "dog", "sun", "rain", "tree", "road"]

    def write(name: str, n: int, offset: int) -> str:
        rows = []
        for i in range(n):
            shared = i % 6  # words the two sentences share, of five
            first = [f"w{offset + i}"] + [words[(i + k) % 6] for k in range(5)]
            second = [f"v{offset + i}"] + first[1 : 1 + shared] + ["other"] * (5 - shared)
            rows.append((" ".join(first), " ".join(second), shared))
        return str(write_rows(folder / name, ["sentence1", "sentence2", "score"], rows))

    return DataArguments(
        train_file=write("train.csv", 300, 0),
        validation_file=write("validation.csv", 60, 1000),
        test_file=write("test.csv", n_test, 2000),
        text_column=["sentence1"],
        text_pair_column="sentence2",
        label_column="score",
        problem=REGRESSION,
        **kwargs,
    )


def write_rows(path: Path, header: list[str], rows: list[tuple]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def noisy_probs(gold: np.ndarray, num_classes: int, accuracy: float, seed: int) -> np.ndarray:
    """Probabilities whose argmax is right on a random `accuracy` share of the examples."""
    rng = np.random.default_rng(seed)
    right = rng.random(len(gold)) < accuracy
    pred = np.where(right, gold, (gold + rng.integers(1, num_classes, len(gold))) % num_classes)
    probs = rng.dirichlet(np.ones(num_classes), len(gold)) * 0.4  # (n, K)
    probs[np.arange(len(gold)), pred] += 0.6
    return probs / probs.sum(axis=1, keepdims=True)


def noisy_label_probs(gold: np.ndarray, accuracy: float, seed: int) -> np.ndarray:
    """Independent label probabilities (n, L) on the right side of 0.5 for a random `accuracy` share of the
    (example, label) decisions."""
    rng = np.random.default_rng(seed)
    decided = np.where(rng.random(gold.shape) < accuracy, gold, 1 - gold)
    return np.where(decided == 1, rng.uniform(0.5, 1.0, gold.shape), rng.uniform(0.0, 0.5, gold.shape))


def noisy_values(gold: np.ndarray, quality: float, seed: int) -> np.ndarray:
    """Values that follow `gold` the more closely the higher `quality` (0..1), the rest noise of gold's spread."""
    rng = np.random.default_rng(seed)
    return quality * gold + (1 - quality) * rng.normal(gold.mean(), gold.std() + 1e-9, len(gold))


def fake_run(run_dir: Path, side: str, data_args: DataArguments, **changes) -> Path:
    """A finished run directory of `side` trained (on paper) on `data`; `changes` edit run.json sections. A
    multi-label run's thresholds are chosen on validation probabilities as a real run's are."""
    task = load_task(data_args)
    record = {
        "side": side,
        "model": {
            "name": f"{side}-model",
            "source": "test",
            "params": 1000 if side == "scratch" else 5000,
            "trainable_params": 1000,
        },
        "data": task.describe(data_args),
        "hyperparameters": {},
        "training": {
            "seconds": 12.0 if side == "scratch" else 60.0,
            "epochs_run": 2,
            "best_epoch": 2,
            "history": [],
            "examples_per_second": 10.0,
        },
        "validation": {name: 0.8 for name in kinds.get(task.problem_type).validation_fields},  # not read
    }
    if reported(kinds.get(task.problem_type)).decides_by_thresholds:
        gold = task.targets("validation")
        record["thresholds"] = [float(t) for t in choose_thresholds(noisy_label_probs(gold, 0.8, seed=7), gold)]
    for section, values in changes.items():
        record[section] = {**record.get(section, {}), **values} if isinstance(values, dict) else values
    run_dir.mkdir(parents=True)
    (run_dir / "weights.bin").write_bytes(b"\0" * 2048)
    write_run(run_dir, record)
    return run_dir


def answers(task, quality: float, seed: int, split: str = "test") -> np.ndarray:
    """What a fake model of `quality` answers to a split of `task` (test by default): probabilities, or values."""
    gold = task.targets(split)
    kind = kinds.get(task.problem_type)
    if reported(kind).decides_by_thresholds:
        return noisy_label_probs(gold, quality, seed)
    if kind.gives_values:
        return noisy_values(gold, quality, seed)
    return noisy_probs(gold, len(task.labels), quality, seed)


def fake_loader(accuracies: dict[str, float], data: DataArguments):
    """A loader for build_report: each run answers the test and validation splits with its configured quality (the
    accuracy of a single-label run, of each label decision of a multi-label one, how closely a regression run follows
    gold).

    `accuracies` maps a run directory's name to its quality.
    """
    task = load_task(data)

    def load(path: Path, name: str | None = None) -> FakeClassifier:
        record = read_run(path)
        seed = sum(map(ord, Path(path).name))
        table = {
            key: answer
            for split in ("validation", "test")
            for key, answer in zip(task.inputs(split), answers(task, accuracies[Path(path).name], seed, split))
        }
        model = FakeClassifier(record.side, record.labels, record, table)
        model.name = name or record.side
        return model

    return load
