"""A model's answers in the `/classify` shape for each kind of task, against the model's own outputs and
the kind's decisions (`Kind.decide`); how answers and gold labels are said in short."""

from __future__ import annotations

import numpy as np
import pytest

from core import kinds
from demo.answers import answers, short
from demo.kinds import shown
from tests.demo.fakes import EMOTIONS, THRESHOLDS, FakeClassifier, FakeMultiLabel, FakeRegression

TEXTS = ["so glad and happy", "furious and sad, in tears", "a plain sentence"]
PAIRS = ["happy happy", "tears again", "a sentence, plain"]


def test_single_label_answers_are_the_class_probabilities() -> None:
    model = FakeClassifier("scratch")
    found = answers(model, ["a great film", "a dull mess"])
    probs = model.predict_proba(["a great film", "a dull mess"])
    assert [list(answer) for answer in found] == [model.labels, model.labels]
    np.testing.assert_allclose([list(answer.values()) for answer in found], probs, rtol=1e-12)
    assert [shown(model.kind).decision(answer) for answer in found] == ["positive", "negative"]


@pytest.mark.parametrize("pairs", [False, True])
def test_multi_label_answers_hold_each_probability_its_threshold_and_the_labels_decide_chooses(pairs: bool) -> None:
    model = FakeMultiLabel("finetune", pairs=pairs)
    given = PAIRS if pairs else None
    found = answers(model, TEXTS, given)
    probs = model.predict_proba(TEXTS, given)
    chosen = model.kind.decide(probs, model.thresholds)
    for answer, row, picked in zip(found, probs, chosen, strict=True):
        assert list(answer["probs"]) == EMOTIONS
        np.testing.assert_allclose(list(answer["probs"].values()), row, rtol=1e-12)
        assert answer["thresholds"] == dict(zip(EMOTIONS, THRESHOLDS["finetune"]))
        assert answer["label"] == [label for label, on in zip(EMOTIONS, picked) if on]
        # by hand: a label is chosen when its probability reaches its threshold
        assert answer["label"] == [label for label in EMOTIONS if answer["probs"][label] >= answer["thresholds"][label]]
    assert found[0]["label"] == ["joy"] and found[1]["label"] == ["anger", "sadness"]
    assert found[2]["label"] == ["neutral"]


def test_regression_answers_are_the_values() -> None:
    model = FakeRegression("scratch")
    found = answers(model, TEXTS, PAIRS)
    values = model.predict_values(TEXTS, PAIRS)
    assert [list(answer) for answer in found] == [["value"]] * 3
    np.testing.assert_allclose([answer["value"] for answer in found], values, rtol=1e-7)
    assert found[2]["value"] == pytest.approx(5.0 * 2 / 4 + 0.25)  # {a, plain} of {a, plain, sentence, sentence,}
    assert all(isinstance(answer["value"], float) for answer in found)


def test_an_unusable_output_is_refused_with_its_shape() -> None:
    class Short(FakeRegression):
        def predict_values(self, texts: list[str], text_pairs: list[str] | None = None) -> np.ndarray:
            return np.array([1.0, np.nan])

    with pytest.raises(ValueError, match=r"it returned values of shape \(2,\) that are not all finite"):
        answers(Short("scratch"), ["a", "b"], ["c", "d"])
    with pytest.raises(ValueError, match="text_pairs must be given exactly for a pair task"):
        answers(FakeMultiLabel("scratch", pairs=True), ["a"])


def test_answers_and_gold_labels_are_said_in_short() -> None:
    assert short("joy") == "joy" and short(["anger", "sadness"]) == "anger; sadness" and short([]) == "(none)"
    assert [short(v) for v in (3.421234, 12.3456, 1234.5, 0.5, 5)] == ["3.421", "12.35", "1234", "0.5", "5"]
    assert kinds.get("single_label_classification").answer(["negative", "positive"], np.int64(1)) == "positive"
    multi_hot = np.array([1.0, 0.0, 0.0, 1.0], np.float32)
    assert kinds.get("multi_label_classification").answer(EMOTIONS, multi_hot) == ["anger", "sadness"]
    value = kinds.get("regression").answer([], np.float32(3.8))
    assert value == pytest.approx(3.8) and isinstance(value, float)


def test_each_kind_says_what_its_answers_decide() -> None:
    assert shown(kinds.get("regression")).decision({"value": 2.5}) == 2.5
    assert shown(kinds.get("multi_label_classification")).decision({"label": ["joy"], "probs": {}}) == ["joy"]
    assert shown(kinds.get("single_label_classification")).decision({"negative": 0.3, "positive": 0.7}) == "positive"
