"""A side is declared once: every declared side's modules exist, a run.json names its side, and a third side
registered by a test alone is trained, reported, predicted with and served by compare and the app."""

from __future__ import annotations

import csv
import dataclasses
import importlib.util
import json
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, f1_score

from core import sides, task_kinds
from core.sides import Side, SideProfile, SideTask
from tests.compare.fakes import tiny_data

# The third side: its training command, its option class, its predict module and its registry entry, in one module
# this test writes. Its model answers each validation and test text from a fixed table of probabilities, kept in the run.
FAKE_SIDE = '''
"""A side that exists only for a test: `python -m fakeside <data options> --output-dir D` writes a finished run
whose model answers each validation and test text from a fixed probability table (`probs.json`); `load` serves it."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.sides import Benchmark, Side, SideTask, Target
from core.task_kinds import CLASSIFICATION


@dataclass
class FakeArguments:
    accuracy: float = field(default=0.8, metadata={"help": "Share of the test texts the table gets right."})


@dataclass
class Output:
    output_dir: str
    overwrite: bool = False


SIDE = Side(
    name="fakeside",
    title="Fixed-table classifier",
    phrase="the fixed-table model",
    command="fakeside",
    tasks={CLASSIFICATION: SideTask(arguments="fakeside:FakeArguments", predict="fakeside")},
    bench=Benchmark(
        steps={"quick": (1, 1), "full": (1, 1)},
        model_options=(),
        targets=(Target("predict", "p50_ms", "<=", 1.0, "fixed-table single-text p50 (ms)"),),
    ),
)


class TableClassifier:
    side = "fakeside"

    def __init__(self, run_dir, record):
        self.name, self.record, self.labels = self.side, record, record.labels
        self.kind, self.has_pairs, self.thresholds = record.kind, record.has_pairs, record.thresholds
        self.table = json.loads((Path(run_dir) / "probs.json").read_text(encoding="utf-8"))

    def predict_proba(self, texts, text_pairs=None):
        return np.array([self.table[text] for text in texts], dtype=np.float32)

    def predict(self, texts, text_pairs=None):
        return self.kind.decide(self.predict_proba(texts, text_pairs), self.thresholds)


def load(run_dir, record):
    return TableClassifier(run_dir, record)


if __name__ == "__main__":
    from core import sides
    from core.args import DataArguments
    from core.parsing import parse_args
    from core.data import load_task
    from tests.compare.fakes import fake_run, noisy_probs

    sides.SIDES[SIDE.name] = SIDE  # this process's registry, as the test's
    data, out, args = parse_args((DataArguments, Output, FakeArguments), sys.argv[1:])
    task = load_task(data)
    table = {}  # validation too: the report calibrates on it and audits its labels
    for split in ("validation", "test"):
        probs = noisy_probs(task.label_ids(split), len(task.labels), args.accuracy, seed=int(args.accuracy * 100))
        table.update(zip(task.texts(split), probs.tolist()))
    run_dir = fake_run(Path(out.output_dir), "fakeside", data, hyperparameters={"accuracy": args.accuracy})
    (run_dir / "probs.json").write_text(json.dumps(table), encoding="utf-8")
'''


@pytest.fixture
def fake_side(tmp_path: Path, monkeypatch) -> Side:
    """The third side, registered for this test only (its module on the path of this process and of the commands
    compare starts)."""
    folder = tmp_path / "modules"
    folder.mkdir()
    (folder / "fakeside.py").write_text(textwrap.dedent(FAKE_SIDE), encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setenv("PYTHONPATH", str(folder))  # the suite's own root is added by core.processes
    monkeypatch.delitem(sys.modules, "fakeside", raising=False)
    side = importlib.import_module("fakeside").SIDE
    monkeypatch.setitem(sides.SIDES, side.name, side)
    return side


def read_split(path: str) -> tuple[list[str], list[str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    return [row["text"] for row in rows], [row["label"] for row in rows]


@pytest.mark.slow
def test_compare_trains_reports_and_predicts_with_a_side_registered_by_a_test(tmp_path: Path, fake_side) -> None:
    from compare.predict import main as predict_main
    from compare.report.command import main as report_main
    from compare.run.launch import train_side

    data = tiny_data(tmp_path / "data")
    runs = tmp_path / "runs"
    first, reused = train_side(fake_side, data, ["--accuracy", "0.9"], runs / "fakeside")
    assert not reused and train_side(fake_side, data, ["--accuracy", "0.9"], runs / "fakeside") == (first, True)
    second, _ = train_side(fake_side, data, ["--accuracy", "0.6"], runs / "fakeside-low")
    request = json.loads((runs / "fakeside.request.json").read_text(encoding="utf-8"))
    assert request["side"] == "fakeside" and request["defaults"] == {"accuracy": 0.8}

    out = tmp_path / "report"
    names = ["fakeside", "fakeside-low"]
    argv = ["--runs", str(first), str(second), "--names", *names, "--output-dir", str(out)]
    assert report_main([*argv, "--latency-samples", "2", "--bootstrap-resamples", "200"]) == 0

    # Scores computed here from the tables and the test file alone.
    texts, gold_names = read_split(data.test_file)
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    labels = results["labels"]
    gold = [labels.index(name) for name in gold_names]
    tables = {name: json.loads((run / "probs.json").read_text()) for name, run in zip(names, (first, second))}
    for name, table in tables.items():
        predicted = np.argmax([table[text] for text in texts], axis=1)
        model = results["models"][name]
        assert model["title"] == "Fixed-table classifier"
        assert model["accuracy"] == pytest.approx(accuracy_score(gold, predicted))
        assert model["macro_f1"] == pytest.approx(f1_score(gold, predicted, labels=range(len(labels)), average="macro"))
    assert results["models"]["fakeside"]["accuracy"] > results["models"]["fakeside-low"]["accuracy"] + 0.2
    report_md = (out / "report.md").read_text(encoding="utf-8")
    assert "Models: fakeside (Fixed-table classifier), fakeside-low (Fixed-table classifier)." in report_md
    assert "Fixed-table classifier" in (out / "report.html").read_text(encoding="utf-8")

    pd.DataFrame({"text": texts[:7], "id": range(7)}).to_csv(tmp_path / "in.csv", index=False)
    argv = ["--runs", str(first), "--input", str(tmp_path / "in.csv"), "--output", str(tmp_path / "out.csv")]
    assert predict_main(argv) == 0
    labelled = pd.read_csv(tmp_path / "out.csv")
    expected = np.array([tables["fakeside"][text] for text in texts[:7]])
    assert list(labelled["fakeside_label"]) == [labels[i] for i in expected.argmax(axis=1)]
    for k, label in enumerate(labels):
        np.testing.assert_allclose(labelled[f"fakeside_p_{label}"], expected[:, k], atol=1e-6)


def test_the_app_serves_and_titles_a_side_registered_by_a_test(tmp_path: Path, fake_side) -> None:
    from compare.run.launch import train_side
    from demo import prediction
    from demo.sources import load_models

    run, _ = train_side(fake_side, tiny_data(tmp_path / "data"), [], tmp_path / "runs" / "fakeside")
    models, problems = load_models([run])
    assert problems == [] and list(models) == ["fakeside"]
    assert prediction.model_names(models) == ["finetune", "scratch", "fakeside"]
    assert prediction.title("fakeside") == "Fixed-table classifier"
    texts, _ = read_split(str(tmp_path / "data" / "test.csv"))
    table = json.loads((run / "probs.json").read_text())
    answer = prediction.classify(texts[0], "fakeside", models)
    assert list(answer["fakeside"].values()) == pytest.approx(table[texts[0]])


def test_every_declared_side_names_modules_that_exist_under_each_of_its_tasks() -> None:
    for declared in sides.SIDES.values():
        for task in declared.tasks:
            side = declared.under(task)
            for module in (side.command, side.arguments.partition(":")[0], side.predict):
                assert importlib.util.find_spec(module) is not None, (side.name, task.name, module)
            assert dataclasses.is_dataclass(side.options())
            assert set(side.profiles) == set(sides.PROFILES)


def test_the_registry_holds_model_families_not_tasks() -> None:
    assert list(sides.SIDES) == ["finetune", "scratch", "scratch-pretrained"]
    assert not set(sides.SIDES) & set(task_kinds.TASK_KINDS)
    assert sides.names_of(task_kinds.TRANSLATION) == ["scratch"]
    assert sides.names_of(task_kinds.CLASSIFICATION) == ["finetune", "scratch", "scratch-pretrained"]


def test_the_from_scratch_side_trains_a_translator_under_the_translation_task() -> None:
    from scratch.args import ScratchArguments
    from scratch.translation.args import TranslationArguments

    classifier, translator = sides.get("scratch"), sides.get("scratch", task_kinds.TRANSLATION)
    assert (classifier.task, translator.task) == (task_kinds.CLASSIFICATION, task_kinds.TRANSLATION)
    assert (classifier.options(), translator.options()) == (ScratchArguments, TranslationArguments)
    assert (classifier.predict, translator.predict) == ("scratch.predict", "core.translator")
    assert (
        translator.command == classifier.command == "scratch"
        and translator.under(task_kinds.CLASSIFICATION) == classifier
    )
    assert translator.profiles["quick"].side_flags() == ["--preset", "small", "--max-steps", "1500"]
    assert translator.profiles["full"].side_flags() == ["--preset", "base"]
    assert classifier.profiles["quick"].side_flags()[:2] == ["--min-steps", "800"] and not translator.search_space
    with pytest.raises(ValueError, match=r"^the translation task has no side 'finetune'; its sides are scratch$"):
        sides.get("finetune", task_kinds.TRANSLATION)


def record(side: str, task_kind: str = "classification", distillation: dict | None = None) -> SimpleNamespace:
    """The fields of a run record (`core.record.RunRecord`) that name its side: its command, and its task as run.json
    names it (`task_kind`) and as the record holds it (`task`)."""
    return SimpleNamespace(side=side, task=task_kinds.get(task_kind), distillation=distillation)


def test_a_run_names_its_side_by_command_and_task_kind() -> None:
    assert sides.of_run(record("finetune")).name == "finetune"
    assert sides.of_run(record("scratch")).name == "scratch"
    translator = sides.of_run(record("scratch", "translation"))
    assert translator == sides.get("scratch", task_kinds.TRANSLATION) and translator.task is task_kinds.TRANSLATION
    with pytest.raises(ValueError, match=r"^side 'finetune' is not one of scratch\.$"):
        sides.of_run(record("finetune", "translation"))
    with pytest.raises(ValueError, match=r"^side 'bert' is not one of finetune, scratch\.$"):
        sides.of_run(record("bert"))
    with pytest.raises(ValueError, match="unknown side 'bert'; the sides are finetune, scratch, scratch-pretrained"):
        sides.get("bert")


def test_titles_name_the_distilled_student() -> None:
    assert sides.run_title(record("finetune")) == "Fine-tuned BERT"
    assert sides.run_title(record("scratch", distillation={"teacher": "t"})) == "From-scratch Transformer, distilled"


def test_a_side_must_give_every_profile_and_be_under_a_task_it_trains_for() -> None:
    with pytest.raises(ValueError, match=r"side 'x' gives profiles \['quick'\] for classification; give full, quick"):
        Side("x", "X", "the x model", "x", {task_kinds.CLASSIFICATION: SideTask("x:A", "x", {"quick": SideProfile()})})
    classifier = {task_kinds.CLASSIFICATION: SideTask("x:A", "x")}
    assert Side("x", "X", "the x model", "x", classifier).task is task_kinds.CLASSIFICATION  # its first task
    with pytest.raises(ValueError, match=r"^side 'x' has no translation task; its tasks are classification$"):
        Side("x", "X", "the x model", "x", classifier, task=task_kinds.TRANSLATION)


def test_compare_run_takes_the_flags_of_a_side_registered_by_a_test(fake_side) -> None:
    from compare.commands import RUN

    argv = ["--task", "sst2", "--output-dir", "x", "--side-args", "fakeside=--accuracy 0.9", "scratch=--preset tiny"]
    _, (_, args, _) = RUN.parse(argv)
    assert args.side_flags("fakeside") == ["--accuracy", "0.9"] and args.side_flags("scratch")[-2:] == [
        "--preset",
        "tiny",
    ]
    with pytest.raises(ValueError, match=r"python -m fakeside would refuse .*--accuracy x"):
        RUN.parse([*argv[:4], "--side-args", "fakeside=--accuracy x"])


def test_the_bench_holds_a_side_registered_by_a_test_to_its_targets(fake_side) -> None:
    from compare.bench.results import check_targets

    bench = {"predict": {"fakeside": {"p50_ms": 0.5}, "finetune": {"p50_ms": 20.0}}}
    rows = {row["key"]: row for row in check_targets(bench)}
    assert rows["predict.fakeside.p50_ms"] == {
        "target": "fixed-table single-text p50 (ms)",
        "key": "predict.fakeside.p50_ms",
        "op": "<=",
        "threshold": 1.0,
        "value": 0.5,
        "met": True,
    }
    assert rows["predict.finetune.p50_ms"]["met"] is False and rows["scratch.peak_rss_mb"]["value"] is None


def test_the_report_gives_a_side_registered_by_a_test_its_column(tmp_path: Path, fake_side) -> None:
    from compare.report.command import ReportArguments, build_report
    from compare.scoring.statistics import StatisticsArguments
    from tests.compare.fakes import fake_loader, fake_run

    data = tiny_data(tmp_path / "data")
    runs = [fake_run(tmp_path / "runs" / name, name, data) for name in ("fakeside", "scratch")]
    args = ReportArguments(runs=[str(r) for r in runs], output_dir=str(tmp_path / "report"), latency_samples=2)
    loader = fake_loader({"fakeside": 0.9, "scratch": 0.6}, data)
    results = build_report(args, StatisticsArguments(bootstrap_resamples=200), loader=loader, draw=lambda *a: {})
    assert list(results["models"]) == ["fakeside", "scratch"]
    assert results["models"]["fakeside"]["title"] == "Fixed-table classifier"
    assert "fakeside (Fixed-table classifier)" in (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
