"""In-memory stand-ins for trained runs: fake classifiers answering from fixed probability tables, and
run directories whose run.json describes real tiny splits (so fingerprints and data loading are real)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from core.args import DataArguments
from core.data import load_task
from core.rundir import write_run_json

LABELS = ["neg", "neu", "pos"]


class FakeClassifier:
    def __init__(self, side: str, labels: list[str], run: dict, table: dict[str, np.ndarray]) -> None:
        self.name, self.side, self.labels, self.run, self.table = side, side, labels, run, table

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.table[t] for t in texts]).reshape(len(texts), len(self.labels))


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


def noisy_probs(gold: np.ndarray, num_classes: int, accuracy: float, seed: int) -> np.ndarray:
    """Probabilities whose argmax is right on a random `accuracy` share of the examples."""
    rng = np.random.default_rng(seed)
    right = rng.random(len(gold)) < accuracy
    pred = np.where(right, gold, (gold + rng.integers(1, num_classes, len(gold))) % num_classes)
    probs = rng.dirichlet(np.ones(num_classes), len(gold)) * 0.4  # (n, K)
    probs[np.arange(len(gold)), pred] += 0.6
    return probs / probs.sum(axis=1, keepdims=True)


def fake_run(run_dir: Path, side: str, data_args: DataArguments, **changes) -> Path:
    """A finished run directory of `side` trained (on paper) on `data`; `changes` edit run.json sections."""
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
        "validation": {"accuracy": 0.8, "macro_f1": 0.8},
    }
    for section, values in changes.items():
        record[section] = {**record[section], **values} if isinstance(values, dict) else values
    run_dir.mkdir(parents=True)
    (run_dir / "weights.bin").write_bytes(b"\0" * 2048)
    write_run_json(run_dir, record)
    return run_dir


def fake_loader(accuracies: dict[str, float], data: DataArguments):
    """A loader for build_report: each run answers the test split with its configured accuracy.

    `accuracies` maps a run directory's name to the accuracy its fake classifier reaches.
    """
    from core.rundir import read_run_json

    task = load_task(data)
    texts, gold = task.texts("test"), task.label_ids("test")

    def load(path: Path, name: str | None = None) -> FakeClassifier:
        run = read_run_json(path)
        seed = sum(map(ord, Path(path).name))
        probs = noisy_probs(gold, len(task.labels), accuracies[Path(path).name], seed)
        model = FakeClassifier(run["side"], list(run["data"]["labels"]), run, dict(zip(texts, probs)))
        model.name = name or run["side"]
        return model

    return load
