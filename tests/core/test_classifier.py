from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from core.classifier import find_runs, load, predict_in_batches
from core.record import write_run
from core.rundir import RunError
from tests.core.test_rundir import record


def test_load_refuses_a_missing_run(tmp_path: Path) -> None:
    with pytest.raises(RunError, match="does not exist"):
        load(tmp_path / "missing")


def test_find_runs_expands_a_parent_directory(tmp_path: Path) -> None:
    for side in ("finetune", "scratch"):
        (tmp_path / side).mkdir()
        write_run(tmp_path / side, record(side))
    (tmp_path / "notes").mkdir()
    assert find_runs([tmp_path]) == [tmp_path / "finetune", tmp_path / "scratch"]
    assert find_runs([tmp_path / "scratch"]) == [tmp_path / "scratch"]
    with pytest.raises(RunError, match="no run.json"):
        find_runs([tmp_path / "notes"])


def test_load_points_a_translation_run_to_the_translator(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text(json.dumps({"schema_version": 1, "side": "scratch", "task_kind": "translation"}))
    with pytest.raises(RunError, match="is a translation run, not a classifier; load it with core.translator.load"):
        load(tmp_path)


def test_predict_in_batches_groups_similar_lengths_and_keeps_the_order_given() -> None:
    texts = ["a" * n for n in (5, 1, 9, 3, 7, 2, 8)]
    batches: list[list[str]] = []

    def predict(batch: list[str]) -> np.ndarray:
        batches.append(batch)
        return np.array([[len(text), -len(text)] for text in batch], np.float64)

    out = predict_in_batches(predict, texts, batch_size=3)
    assert [[len(t) for t in batch] for batch in batches] == [[1, 2, 3], [5, 7, 8], [9]]
    np.testing.assert_array_equal(out[:, 0], [len(t) for t in texts])
    assert out.dtype == np.float32
    assert predict_in_batches(predict, [], batch_size=3, width=2).shape == (0, 2)


def test_both_sides_take_the_same_task_keywords_in_the_same_order_and_declare_what_they_can() -> None:
    import inspect

    from core.classifier import BaseClassifier
    from finetune.predict import FinetunedClassifier
    from scratch.predict import ScratchClassifier

    def keywords(cls: type) -> list[str]:
        parameters = inspect.signature(cls.__init__).parameters.values()
        return [p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY]

    base = keywords(BaseClassifier)
    assert base == ["kind", "labels", "has_pairs", "thresholds", "temperatures"]
    assert keywords(FinetunedClassifier) == keywords(ScratchClassifier) == [*base, "batch_size"]
    for side in (FinetunedClassifier, ScratchClassifier):
        assert list(inspect.signature(side.__init__).parameters)[-8:-6] == ["record", "forward"]
    assert (BaseClassifier.attends, BaseClassifier.attributes) == (False, False)
    assert (FinetunedClassifier.attends, FinetunedClassifier.attributes) == (False, True)
    assert (ScratchClassifier.attends, ScratchClassifier.attributes) == (True, True)


def test_thresholds_and_temperatures_given_are_what_the_classifier_decides_by() -> None:
    from core import kinds
    from core.classifier import BaseClassifier

    class Fixed(BaseClassifier):
        side = "finetune"

        def outputs(self, texts, text_pairs=None):
            return np.tile(np.float32([0.6, 0.3]), (len(texts), 1))

    multi = kinds.get("multi_label_classification")
    plain = Fixed(kind=multi, labels=["a", "b"], thresholds=[0.5, 0.5])
    hot = Fixed(kind=multi, labels=["a", "b"], thresholds=[0.5, 0.5], temperatures=[4.0, 4.0])
    assert plain.predict(["x"]).tolist() == [[1, 0]]
    # logit(0.6) / 4 and logit(0.3) / 4: both move towards 0.5, the first staying above it
    expected = 1 / (1 + np.exp(-np.log(np.float32([0.6 / 0.4, 0.3 / 0.7])) / 4))
    np.testing.assert_allclose(hot.predict_proba(["x"])[0], expected, atol=1e-6)
    assert hot.temperatures == [4.0, 4.0] and hot.thresholds == [0.5, 0.5]
    with pytest.raises(NotImplementedError, match="does not attribute"):
        plain.attribute(["x"])
