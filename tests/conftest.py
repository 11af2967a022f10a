"""Shared fixtures: tiny data written by the tests themselves, and the local dataset mirror."""

from __future__ import annotations

import os
import pickle
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
from filelock import FileLock

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
# Under pytest-xdist the workers share the cores: each TensorFlow process (and the subprocesses its tests start) gets
# its share of threads instead of one thread per core each, which oversubscribes the machine.
if "PYTEST_XDIST_WORKER_COUNT" in os.environ:
    _threads = str(max(1, (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"])))
    os.environ.setdefault("TF_NUM_INTRAOP_THREADS", _threads)
    os.environ.setdefault("TF_NUM_INTEROP_THREADS", _threads)

ROOT = Path(__file__).resolve().parents[1]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files with the most slow tests run first (then those with the most tests), each file's tests in their
    order: pytest-xdist hands out whole files (`--dist loadfile`, with `--no-loadscope-reorder` so that it keeps this
    order), and a long file handed out last keeps one worker busy while the other idles."""
    from collections import Counter

    slow = Counter(item.path for item in items if item.get_closest_marker("slow"))
    tests = Counter(item.path for item in items)
    items.sort(key=lambda item: (-slow[item.path], -tests[item.path]))


@pytest.fixture(scope="session", autouse=True)
def unoptimised_graphs() -> None:
    """TensorFlow's graph optimiser (Grappler) is off in the test processes: it rewrites every graph before its first
    run, which costs a tiny model's few steps more than it saves (docs/results.md, "no graph optimiser in the test
    processes"). The rewrites do not change what a graph computes; commands started in child processes keep it."""
    import tensorflow as tf

    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})


T = TypeVar("T")

POSITIVE = ["a great film", "wonderful and moving", "i loved every minute", "superb acting", "a joy to watch"]
NEGATIVE = ["a dull mess", "boring and far too long", "i hated it", "terrible acting", "a waste of time"]


def mirror_dir(holding: str = "sst2/train.csv") -> Path | None:
    """The local dataset mirror, found as the commands find it (`core.tasks.find_data_dir`), if it holds `holding`."""
    from core.tasks import find_data_dir

    found = find_data_dir()
    return Path(found) if found and (Path(found) / holding).is_file() else None


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], T]) -> T:
    """`build(folder)`'s result, built once per test session even when pytest-xdist runs it in several workers.

    Alone, the folder is a fresh temporary one. Under xdist, the first worker to ask builds into a folder every
    worker of the session shares while it holds a lock; the others wait for it and read the pickled result.
    """
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return build(tmp_path_factory.mktemp(name))
    folder = tmp_path_factory.getbasetemp().parent / name
    result = folder / "built.pickle"
    with FileLock(f"{folder}.lock"):
        if not result.is_file():
            shutil.rmtree(folder, ignore_errors=True)  # what a failed build in another worker left
            folder.mkdir()
            value = build(folder)
            result.write_bytes(pickle.dumps(value))
        return pickle.loads(result.read_bytes())


@pytest.fixture
def data_dir() -> Path:
    found = mirror_dir()
    if found is None:
        pytest.skip("no local dataset mirror: set TEXTCLS_DATA_DIR to a folder holding sst2/ and emotion/")
    return found


@pytest.fixture
def pt_en_dir() -> Path:
    """The local mirror's pt_en/ folder."""
    found = mirror_dir("pt_en/train.tsv")
    if found is None:
        pytest.skip("no local pt_en mirror: set TEXTCLS_DATA_DIR to a folder holding pt_en/")
    return found / "pt_en"


def write_csv(path: Path, rows: list[tuple[str, object]], header: str = "text,label") -> Path:
    import csv

    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header.split(","))
        writer.writerows(rows)
    return path


def write_frame(frame, path: Path) -> Path:
    """A pandas frame as a data file of the kind `path`'s suffix names: .csv, .tsv, .json (records), .jsonl or .parquet."""
    import json

    if path.suffix == ".csv":
        frame.to_csv(path, index=False)
    elif path.suffix == ".tsv":
        frame.to_csv(path, index=False, sep="\t")
    elif path.suffix == ".json":
        path.write_text(json.dumps(frame.to_dict(orient="records")))
    elif path.suffix == ".jsonl":
        frame.to_json(path, orient="records", lines=True)
    else:
        frame.to_parquet(path)
    return path


def separable_rows(n: int, seed: int = 0) -> list[tuple[str, str]]:
    """`n` labelled rows that a bag of words separates perfectly: positive and negative phrases, mixed."""
    import random

    rng = random.Random(seed)
    rows = []
    for i in range(n):
        label = "positive" if i % 2 == 0 else "negative"
        pool = POSITIVE if label == "positive" else NEGATIVE
        rows.append((" ".join(rng.sample(pool, 2)), label))
    return rows


@pytest.fixture
def tiny_csv(tmp_path: Path) -> Path:
    """A 200-row two-class training file with string labels."""
    return write_csv(tmp_path / "train.csv", separable_rows(200))


@pytest.fixture(scope="session")
def tiny_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two finished tiny runs, one per side, trained on the same 200-row separable CSV.

    Both use the same data options (seed 0, max length 16), so their carved splits are identical.
    Returns {"finetune": run dir, "scratch": run dir, "train_file": the CSV}. Trained once per session.
    """
    from tests.finetune.tiny import train_tiny_run as train_finetune
    from tests.scratch.tiny import train_tiny_run as train_scratch

    train_file = built_once(
        tmp_path_factory, "tiny-runs-data", lambda root: write_csv(root / "train.csv", separable_rows(200))
    )
    root = train_file.parent  # both runs beside their data, as the app finds runs in a folder

    def train(side: str) -> Path:
        for leftover in (root / side, root / f"{side}.partial"):  # what a failed build in another worker left
            shutil.rmtree(leftover, ignore_errors=True)
        if side == "finetune":
            return train_finetune(root / side, train_file)
        return train_scratch(root / side, train_file, seed=0, max_length=16)

    # Under pytest-xdist the second worker trains the sides in the other order: both are trained at once.
    order = (
        ["finetune", "scratch"] if os.environ.get("PYTEST_XDIST_WORKER", "gw0") == "gw0" else ["scratch", "finetune"]
    )
    runs = {side: built_once(tmp_path_factory, f"tiny-runs-{side}", lambda _, side=side: train(side)) for side in order}
    return {"finetune": runs["finetune"], "scratch": runs["scratch"], "train_file": train_file}


@pytest.fixture(scope="session")
def toy_file(tmp_path_factory) -> Path:
    from tests.scratch.translation.toy import toy_pairs, write_tsv

    return write_tsv(tmp_path_factory.mktemp("toy") / "train.tsv", toy_pairs(1500))


@pytest.fixture(scope="session")
def tiny_translation_run(toy_file, tmp_path_factory) -> Path:
    from tests.scratch.translation.conftest import tiny_command, train_tiny

    return built_once(
        tmp_path_factory,
        "translation",
        lambda folder: train_tiny(tiny_command(toy_file, folder / "run", "--max-tokens", "512")),
    )


@pytest.fixture(scope="session")
def compared_report(tiny_runs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report `python -m compare report` writes over the two tiny runs."""
    from tests.demo.fakes import compare_report

    return built_once(tmp_path_factory, "app-compared", lambda folder: compare_report(tiny_runs, folder / "report"))
