"""A kind of task is one small class per layer (docs/development.md, "Adding a kind, layer by layer"): a fourth kind,
registered by this test alone in `core.kinds` and in each layer's views, is trained, scored in a report and used for
predictions without a line anywhere else."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from compare import kinds as compare_kinds
from core import attribution, card
from core.kinds import KINDS, Regression, register
from core.kinds.views import LAYERS
from core.regression import regression_scores
from demo import kinds as demo_kinds
from scratch.distill import kinds as distill_kinds
from tests.compare.fakes import write_rows
from tests.scratch.tiny import tiny_argv


class Grades(Regression):
    """Ordered grades 0..4: trained as a value, decided by rounding it to the nearest whole grade, and scored by
    Spearman's rho beside the share of exactly right grades."""

    name = "ordinal_grades"
    title = "ordinal grading"
    short = "grades"
    second = "exact"
    validation_fields = ("spearman", "exact")

    def decide(self, outputs: np.ndarray, thresholds: list[float] | None = None) -> np.ndarray:
        return np.rint(np.asarray(outputs, np.float64))

    def validation_scores(self, targets, outputs, thresholds=None) -> dict[str, float]:
        exact = float(np.mean(self.decide(outputs) == np.asarray(targets)))
        return {**super().validation_scores(targets, outputs), "exact": exact}


# each layer's view of the kind: compare scores it by its own two scores; the others treat it as a regression


@compare_kinds.register(Grades)
class ComparedGrades(compare_kinds.ComparedRegression):
    def point_scores(self, gold, pred, num_labels) -> dict[str, float]:
        spearman = regression_scores(gold, pred)["spearman"]
        return {"spearman": spearman, "exact": float(np.mean(np.rint(pred) == gold))}

    def quick_scores(self, decisions, gold, num_labels) -> dict[str, float]:
        return self.point_scores(gold, decisions, num_labels)

    def report_scores(self, outputs, decisions, gold, labels, args) -> dict:
        return {
            **super().report_scores(outputs, decisions, gold, labels, args),
            **self.point_scores(gold, decisions, 0),
        }


@demo_kinds.register(Grades)
class ShownGrades(demo_kinds.ShownRegression):
    def invitation(self, them: str) -> str:
        return f"see the grade each model gives {them}"


@card.register(Grades)
class CardedGrades(card.CardedRegression):
    noun = "text grading model"


@attribution.register(Grades)
class ExplainedGrades(attribution.ExplainedRegression):
    pass


@distill_kinds.register(Grades)
class DistilledGrades(distill_kinds.DistilledRegression):
    pass


@pytest.fixture
def grades():
    register(Grades)
    yield KINDS[Grades.name]
    del KINDS[Grades.name]


def test_every_layer_has_a_view_of_the_toy_kind_and_names_where_a_missing_one_goes(grades) -> None:
    from compare.kinds import reported
    from core.attribution import explained
    from core.card import carded
    from demo.kinds import shown
    from scratch.distill.kinds import distilled

    assert {views.module for views in LAYERS} >= {
        "compare.kinds",
        "demo.kinds",
        "core.card",
        "core.attribution",
        "scratch.distill.kinds",
    }
    assert all(views.of(grades).kind is not None for views in LAYERS)  # a layer without a Grades view raises
    assert reported(grades).point_scores(np.array([1.0, 2.0, 3.0]), np.array([1.2, 2.6, 2.9]), 0) == {
        "spearman": pytest.approx(1.0),
        "exact": pytest.approx(2 / 3),
    }
    assert shown(grades).invitation("it") == "see the grade each model gives it"
    assert shown(grades).answer_space([], (0.0, 4.0)) == "a value from 0 to 4 in train"
    assert carded(grades).noun == "text grading model"
    assert explained(grades).targets(np.array([2.5])) == [None]
    assert distilled(grades).soft_targets_name == "values"

    class Unseen(Regression):
        name = "unseen"

    with pytest.raises(LookupError, match=r"the app has no view of the kind unseen .*demo\.kinds\.register\(Unseen\)"):
        shown(Unseen())


def grade_rows(n: int, offset: int) -> list[tuple[str, int]]:
    """Texts whose grade the words say: "grade g" in the text, among other words."""
    words = ["awful", "poor", "fair", "good", "superb"]
    return [(f"item {offset + i} looks {words[i % 5]} really {words[i % 5]}", i % 5) for i in range(n)]


@pytest.mark.slow
def test_a_kind_registered_by_a_test_is_trained_reported_and_predicted(tmp_path: Path, grades) -> None:
    from compare.predict import main as predict_main
    from compare.report.command import main as report_main
    from core.record import read_run
    from scratch.__main__ import main as scratch_main

    files = {
        split: write_rows(tmp_path / f"{split}.csv", ["text", "label"], grade_rows(n, offset))
        for split, n, offset in (("train", 300, 0), ("validation", 60, 1000), ("test", 80, 2000))
    }
    runs = [tmp_path / "runs" / "scratch", tmp_path / "runs" / "scratch-43"]
    for run, seed in zip(runs, (42, 43)):
        argv = tiny_argv(run, files["train"], max_steps=150, no_onnx=True, problem="ordinal_grades", seed=seed)
        scratch_main([*argv, "--validation-file", str(files["validation"]), "--test-file", str(files["test"])])
    run = runs[0]
    record = read_run(run)
    assert record.kind is grades and record.data.problem_type == "ordinal_grades"
    assert set(record.validation) >= {"spearman", "exact", "loss"}

    out = tmp_path / "report"
    argv = ["--runs", *map(str, runs), "--names", "scratch", "scratch-43", "--output-dir", str(out)]
    assert report_main([*argv, "--latency-samples", "2"]) == 0
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["problem_type"] == "ordinal_grades"
    rows = [json.loads(line) for line in (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]
    gold = np.array([row["gold"] for row in rows], np.float64)
    values = np.array([row["predictions"]["scratch"]["value"] for row in rows], np.float64)
    scored = results["models"]["scratch"]
    grades_given = np.rint(values)  # the kind's decision, which the report scores
    assert scored["spearman"] == pytest.approx(spearmanr(gold, grades_given).statistic, abs=1e-6)
    assert scored["exact"] == pytest.approx(np.mean(grades_given == gold))
    assert scored["spearman"] > 0.8  # the words give the grade away
    assert "ordinal grading" in (out / "report.md").read_text(encoding="utf-8")

    texts = [text for text, _ in grade_rows(5, 5000)]
    pd.DataFrame({"text": texts}).to_csv(tmp_path / "in.csv", index=False)
    argv = ["--runs", str(run), "--input", str(tmp_path / "in.csv"), "--output", str(tmp_path / "out.csv")]
    assert predict_main(argv) == 0
    labelled = pd.read_csv(tmp_path / "out.csv")
    assert list(labelled["text"]) == texts and "scratch_value" in labelled
