"""`compare curve`: every asked-for point present, a rerun reusing them, and the catch-up size."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, f1_score

from compare.curve.command import CurveArguments, build_curve, run_path
from compare.curve.points import catch_up_sentence, catch_up_size, summarise
from compare.run import launch
from core.args import DataArguments, RunArguments
from core.data import DataError, load_task
from core.record import read_run
from core.rundir import partial_path
from tests.compare.fakes import FakeClassifier, fake_run, noisy_probs, noisy_values, pair_regression_data, tiny_data
from tests.conftest import separable_rows, write_csv


def rows(table: list[tuple[str, int, int, float]]) -> list[dict]:
    return [
        {"side": side, "size": size, "seed": seed, "accuracy": acc, "macro_f1": acc, "train_seconds": 1.0}
        for side, size, seed, acc in table
    ]


def test_catch_up_is_the_smallest_size_where_the_seed_mean_is_within_one_point():
    points = rows(
        [
            ("finetune", 100, 0, 0.80), ("finetune", 100, 1, 0.82),  # mean 0.81
            ("scratch", 100, 0, 0.60), ("scratch", 100, 1, 0.64),  # mean 0.62: 19 points behind
            ("finetune", 1000, 0, 0.86), ("finetune", 1000, 1, 0.88),  # mean 0.87
            ("scratch", 1000, 0, 0.84), ("scratch", 1000, 1, 0.88),  # mean 0.86: exactly 1 point behind
            ("finetune", 5000, 0, 0.90), ("finetune", 5000, 1, 0.90),
            ("scratch", 5000, 0, 0.91), ("scratch", 5000, 1, 0.91),
        ]
    )  # fmt: skip
    assert catch_up_size(points) == 1000
    # One seed alone at 1000 (0.84 against 0.86) would be 2 points behind: the mean decides, not a lucky seed.
    assert catch_up_size([p for p in points if p["seed"] == 0]) == 5000


def test_catch_up_is_none_when_scratch_never_gets_within_one_point():
    points = rows(
        [("finetune", 100, 0, 0.80), ("scratch", 100, 0, 0.70), ("finetune", 200, 0, 0.85), ("scratch", 200, 0, 0.8399)]
    )
    assert catch_up_size(points) is None
    assert "never came within 1 point" in catch_up_sentence(None, [100, 200])
    assert "100 to 200" in catch_up_sentence(None, [100, 200])


def test_catch_up_ignores_sizes_only_one_side_has():
    points = rows([("scratch", 50, 0, 0.99), ("finetune", 100, 0, 0.80), ("scratch", 100, 0, 0.795)])
    assert catch_up_size(points) == 100


def test_summary_gives_mean_and_sample_spread_per_side_and_size():
    points = rows([("scratch", 10, 1, 0.5), ("scratch", 10, 2, 0.7), ("scratch", 10, 3, 0.6), ("finetune", 10, 1, 0.9)])
    summary = summarise(points)
    (point,) = summary["scratch"]
    assert point.seeds == [1, 2, 3]
    assert point.mean == pytest.approx(0.6)
    assert point.std == pytest.approx(0.1)  # sample standard deviation of 0.5, 0.7, 0.6
    assert (point.low, point.high) == (0.5, 0.7)
    assert summary["finetune"][0].std == 0.0


@pytest.mark.parametrize(
    ("sizes", "message"), [("500,abc", "comma-separated whole numbers"), ("1,8", "at least 2"), ("", "at least one")]
)
def test_bad_sizes_are_refused_with_the_value(sizes, message):
    with pytest.raises(ValueError, match=message):
        CurveArguments(output_dir="x", sizes=sizes)


def test_sizes_are_sorted_and_deduplicated():
    assert CurveArguments(output_dir="x", sizes="8000, 500,2000,500").size_list() == [500, 2000, 8000]


@pytest.fixture
def split_files(tmp_path: Path) -> dict[str, Path]:
    return {
        "train": write_csv(tmp_path / "train.csv", separable_rows(120, seed=1)),
        "validation": write_csv(tmp_path / "validation.csv", separable_rows(16, seed=2)),
        "test": write_csv(tmp_path / "test.csv", separable_rows(20, seed=3)),
    }


def test_seeds_on_a_carved_test_split_are_refused(tmp_path, tiny_csv):
    data = DataArguments(train_file=str(tiny_csv))
    with pytest.raises(DataError, match="--validation-file and --test-file"):
        build_curve(data, CurveArguments(output_dir=str(tmp_path / "c"), sizes="20", seeds=2))


def test_the_curve_does_not_offer_max_train_samples_and_refuses_it_with_the_reason(tmp_path, tiny_csv, capsys):
    from compare.commands import CURVE

    with pytest.raises(SystemExit):
        CURVE.parser().parse(["--help"])
    assert "--sizes" in capsys.readouterr().out
    assert "--max-train-samples" not in CURVE.parser().format_help()
    _, (data, args) = CURVE.parse(["--train-file", str(tiny_csv), "--max-train-samples", "5", "--output-dir", "c"])
    with pytest.raises(DataError, match="sets the train size itself from --sizes; leave out --max-train-samples"):
        build_curve(data, args)


def test_a_size_beyond_the_train_split_is_refused(tmp_path, split_files):
    data = DataArguments(train_file=str(split_files["train"]), test_file=str(split_files["test"]))
    with pytest.raises(DataError, match="train split has only 108"):
        build_curve(data, CurveArguments(output_dir=str(tmp_path / "c"), sizes="20,5000"))


class FakeTrainer:
    """Stands in for `run_command` in compare.run.launch: writes a finished fake run for `python -m <side> ...`."""

    def __init__(self) -> None:
        self.commands: list[list[str]] = []

    def run(self, cmd, **_kwargs):
        from transformers import HfArgumentParser

        self.commands.append(cmd)
        data, run_args, _ = HfArgumentParser((DataArguments, RunArguments)).parse_args_into_dataclasses(
            args=cmd[3:], return_remaining_strings=True
        )
        fake_run(partial_path(run_args.output_dir), cmd[2], data)
        Path(partial_path(run_args.output_dir)).rename(run_args.output_dir)
        return ""


def accuracy_for(run_dir: Path) -> float:
    """What the fake classifier of a curve run scores: scratch climbs with size, finetune starts high."""
    side, size, seed = run_dir.name.split("-")
    n = int(size[1:])
    return (0.9 if side == "finetune" else 0.5 + n / 400) - 0.02 * (int(seed[4:]) % 2)


class FakeLoader:
    def __init__(self, data: DataArguments) -> None:
        task = load_task(data)
        self.texts, self.gold, self.labels = task.texts("test"), task.label_ids("test"), task.labels
        self.loaded: list[str] = []
        self.probs: dict[str, np.ndarray] = {}

    def __call__(self, run_dir: Path) -> FakeClassifier:
        run_dir = Path(run_dir)
        self.loaded.append(run_dir.name)
        probs = noisy_probs(self.gold, len(self.labels), accuracy_for(run_dir), seed=len(self.loaded))
        self.probs[run_dir.name] = probs
        return FakeClassifier(run_dir.name.split("-")[0], self.labels, read_run(run_dir), dict(zip(self.texts, probs)))


def test_curve_has_every_point_and_a_rerun_reuses_runs_and_scores(tmp_path, monkeypatch):
    trainer = FakeTrainer()
    monkeypatch.setattr(launch, "run_command", trainer.run)
    data = tiny_data(tmp_path / "data", n_test=90, seed=5)
    loader = FakeLoader(data)
    args = CurveArguments(output_dir=str(tmp_path / "curve"), sizes="60,120", seeds=2)
    curve = build_curve(data, args, loader=loader)

    wanted = {(side, size, seed) for side in ("finetune", "scratch") for size in (60, 120) for seed in (5, 6)}
    assert {(p["side"], p["size"], p["seed"]) for p in curve["points"]} == wanted
    assert len(trainer.commands) == 8
    for point in curve["points"]:
        run_dir = run_path(tmp_path / "curve", point["side"], point["size"], point["seed"])
        run = json.loads((run_dir / "run.json").read_text())
        assert run["data"]["splits"]["train"] == point["size"] == point["train_rows"]
        assert run["data"]["options"]["seed"] == point["seed"]
        predicted = loader.probs[run_dir.name].argmax(axis=1)
        assert point["accuracy"] == pytest.approx(accuracy_score(loader.gold, predicted))
        assert point["macro_f1"] == pytest.approx(f1_score(loader.gold, predicted, average="macro"))
    written = json.loads((tmp_path / "curve" / "curve.json").read_text())
    assert written["points"] == curve["points"]
    assert written["catch_up_size"] == catch_up_size(curve["points"])
    for name in ("curve.md", "curve.html", "curve.png"):
        assert (tmp_path / "curve" / name).stat().st_size > 0
    assert "| 120 |" in (tmp_path / "curve" / "curve.md").read_text()

    runs = sorted(p for p in (tmp_path / "curve" / "runs").iterdir() if p.is_dir())
    stamps = {p: (p / "run.json").stat().st_mtime_ns for p in runs}
    loads = len(loader.loaded)
    again = build_curve(data, args, loader=loader)
    assert len(trainer.commands) == 8, "a rerun with the same options must not train again"
    assert len(loader.loaded) == loads, "a rerun must reuse the scores of finished points"
    assert {p: (p / "run.json").stat().st_mtime_ns for p in runs} == stamps
    assert again["points"] == curve["points"]

    more = build_curve(data, CurveArguments(output_dir=str(tmp_path / "curve"), sizes="60,120", seeds=3), loader=loader)
    assert len(trainer.commands) == 12, "a third seed trains only its own runs: two sizes, two sides"
    assert len(more["points"]) == 12


@pytest.mark.slow
def test_curve_trains_and_scores_the_real_sides(tmp_path, split_files, monkeypatch):
    """One point of each side through the real training commands (in this process) and core.classifier.load."""
    from tests.finetune.tiny import make_tiny_bert

    calls = []

    def run_in_process(cmd, **_kwargs):
        calls.append(cmd)
        importlib.import_module(f"{cmd[2]}.__main__").main(cmd[3:])
        return ""

    monkeypatch.setattr(launch, "run_command", run_in_process)
    bert = make_tiny_bert(tmp_path / "tiny-bert")
    data = DataArguments(
        train_file=str(split_files["train"]),
        validation_file=str(split_files["validation"]),
        test_file=str(split_files["test"]),
        max_length=16,
    )
    args = CurveArguments(
        output_dir=str(tmp_path / "curve"),
        sizes="24",
        finetune_args=f"--model {bert} --epochs 1 --batch-size 8 --no-onnx",  # served through TensorFlow
        scratch_args="--preset tiny --epochs 1 --batch-size 8 --no-onnx",
    )
    curve = build_curve(data, args)
    assert sorted(c[2] for c in calls) == ["finetune", "scratch"]  # in the grid study's order
    assert {(p["side"], p["size"], p["seed"]) for p in curve["points"]} == {("finetune", 24, 42), ("scratch", 24, 42)}
    for point in curve["points"]:
        run = json.loads((tmp_path / "curve" / "runs" / point["run"] / "run.json").read_text())
        assert run["side"] == point["side"]
        assert run["data"]["splits"] == {"train": 24, "validation": 16, "test": 20}
        assert point["train_seconds"] == run["training"]["seconds"]
        assert point["accuracy"] in {k / 20 for k in range(21)}  # a share of the 20 test texts


def test_a_regression_curve_is_drawn_in_spearman_on_text_pairs(tmp_path, monkeypatch):
    from scipy.stats import pearsonr, spearmanr

    monkeypatch.setattr(launch, "run_command", FakeTrainer().run)
    data = pair_regression_data(tmp_path / "data", n_test=80)
    task = load_task(data)
    gold, inputs = task.targets("test"), task.inputs("test")
    values = {}

    def loader(run_dir: Path) -> FakeClassifier:
        record = read_run(run_dir)
        quality = accuracy_for(Path(run_dir))
        values[Path(run_dir).name] = noisy_values(gold, quality, seed=len(values))
        return FakeClassifier(record.side, [], record, dict(zip(inputs, values[Path(run_dir).name])))

    curve = build_curve(data, CurveArguments(output_dir=str(tmp_path / "curve"), sizes="60,120"), loader=loader)
    assert (curve["problem_type"], curve["metric"]) == ("regression", "spearman")
    for point in curve["points"]:
        predicted = values[run_path(tmp_path / "curve", point["side"], point["size"], point["seed"]).name]
        assert point["spearman"] == pytest.approx(spearmanr(gold, predicted).statistic)
        assert point["pearson"] == pytest.approx(pearsonr(gold, predicted).statistic)
    assert curve["catch_up_size"] == catch_up_size(curve["points"], scores=("spearman", "pearson"))
    markdown = (tmp_path / "curve" / "curve.md").read_text()
    assert "| train size | finetune Spearman | finetune Pearson | finetune train time |" in markdown
    sentence = catch_up_sentence(curve["catch_up_size"], [60, 120], metric="spearman")
    assert sentence in markdown and ("within 0.01 of the fine-tuned one" in sentence)
