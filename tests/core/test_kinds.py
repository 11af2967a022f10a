"""What training depends on per kind of task (`core.kinds`), checked on hand-worked cases and against scikit-learn
and SciPy; `fit` watching each kind's headline (`TrainingConfig.for_classifier`); the run record's validation; and
the classifier base's input checks and decisions (`core.classifier.BaseClassifier`)."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import tensorflow as tf
from scipy.stats import spearmanr
from sklearn.metrics import f1_score

from core import kinds
from core.classifier import BaseClassifier
from core.errors import UserError
from core.kinds import MULTI_LABEL, REGRESSION, SINGLE_LABEL
from core.kinds.keras_objects import MacroF1
from core.multilabel import choose_thresholds
from core.record import RunRecord
from core.rundir import RunError
from core.training import TrainingConfig, fit
from core.training.budget import TrainingPlan
from core.training.log import HISTORY_FILE, read_history
from core.training.loop import validation_outputs

SINGLE, MULTI, VALUES = kinds.get(SINGLE_LABEL), kinds.get(MULTI_LABEL), kinds.get(REGRESSION)


def test_each_kind_watches_its_headline_in_the_validation_logs():
    assert [k.monitor for k in (SINGLE, MULTI, VALUES)] == [
        "val_accuracy",
        "val_macro_f1",
        "val_spearman",
    ]
    with pytest.raises(ValueError, match="problem_type must be one of single_label_classification, "):
        kinds.get("ordinal")


def test_the_losses_from_logits_on_hand_worked_cases():
    logits = tf.constant([[0.0, math.log(3.0)]])  # softmax (1/4, 3/4)
    assert float(SINGLE.loss()(tf.constant([1]), logits)) == pytest.approx(-math.log(0.75), rel=1e-6)
    # sigmoid(0) = 1/2 and sigmoid(ln 3) = 3/4: the labels' losses -ln(1/2) and -ln(1/4), averaged
    multi = MULTI.loss()(tf.constant([[1.0, 0.0]]), logits)
    assert float(multi) == pytest.approx((math.log(2) + math.log(4)) / 2, rel=1e-6)
    # one output per example (B, 1) against targets (B,): no broadcasting to (B, B)
    values = tf.constant([[1.0], [3.0]])
    assert float(VALUES.loss()(tf.constant([2.0, 5.0]), values)) == pytest.approx((1 + 4) / 2)


def test_outputs_are_softmax_sigmoid_or_the_value():
    logits = tf.constant([[0.0, math.log(3.0)]])
    np.testing.assert_allclose(SINGLE.activate(logits), [[0.25, 0.75]], rtol=1e-6)
    np.testing.assert_allclose(MULTI.activate(logits), [[0.5, 0.75]], rtol=1e-6)
    values = VALUES.activate(tf.constant([[1.5], [-2.0]]))
    assert values.shape == (2,) and values.dtype == tf.float32
    np.testing.assert_array_equal(values, [1.5, -2.0])


def test_macro_f1_over_batches_equals_scikit_learns_at_one_half():
    rng = np.random.default_rng(0)
    gold = (rng.random((30, 4)) < 0.3).astype(np.float32)
    gold[:, 3] = 0  # a label never present
    logits = rng.normal(size=(30, 4)).astype(np.float32)
    logits[:, 3] = -1.0  # and never predicted: F1 0, as scikit-learn's zero_division=0
    metric = MacroF1(4)
    for start in range(0, 30, 8):  # batches accumulate counts, not batch F1s
        metric.update_state(gold[start : start + 8], logits[start : start + 8])
    expected = f1_score(gold, logits >= 0, average="macro", zero_division=0)
    assert float(metric.result()) == pytest.approx(expected, rel=1e-6)
    metric.reset_state()
    assert float(metric.result()) == 0.0
    assert MacroF1.from_config(metric.get_config()).num_labels == 4


def test_thresholds_are_chosen_on_validation_for_multi_label_only():
    probs = np.array([[0.9, 0.2], [0.6, 0.4], [0.3, 0.1], [0.2, 0.3]])
    gold = np.array([[1, 0], [1, 0], [0, 0], [1, 0]])
    assert MULTI.choose_thresholds(probs, gold) == [0.2, 0.5]  # label 1 absent: the fallback
    assert MULTI.choose_thresholds(probs, gold) == choose_thresholds(probs, gold).tolist()
    assert SINGLE.choose_thresholds(probs, np.array([0, 0, 1, 1])) is None
    assert VALUES.choose_thresholds(probs[:, 0], probs[:, 1]) is None


def test_validation_scores_of_each_kind_on_hand_worked_cases():
    probs = np.array([[0.8, 0.2], [0.4, 0.6], [0.9, 0.1]])
    single = SINGLE.validation_scores(np.array([0, 0, 0]), probs)
    assert single["accuracy"] == pytest.approx(2 / 3)
    assert single["macro_f1"] == pytest.approx(f1_score([0, 0, 0], [0, 1, 0], labels=[0, 1], average="macro"))
    assert single["loss"] == pytest.approx(-(math.log(0.8) + math.log(0.4) + math.log(0.9)) / 3)

    gold = np.array([[1, 0], [1, 1], [0, 0]], np.float32)
    multi = MULTI.validation_scores(gold, probs, [0.5, 0.5])
    decided = probs >= 0.5  # [[1, 0], [0, 1], [1, 0]]
    assert multi["macro_f1"] == pytest.approx(f1_score(gold, decided, average="macro", zero_division=0))
    assert multi["micro_f1"] == pytest.approx(f1_score(gold, decided, average="micro", zero_division=0))
    assert multi["subset_accuracy"] == pytest.approx(1 / 3)  # the first row only
    assert multi["hamming_loss"] == pytest.approx(2 / 6)
    bce = -(np.log([0.8, 0.8, 0.4, 0.6, 0.1, 0.9])).mean()  # each label's probability of its gold value
    assert multi["loss"] == pytest.approx(bce)
    lowered = MULTI.validation_scores(gold, probs, [0.35, 0.5])  # the run's thresholds decide
    assert lowered["macro_f1"] == pytest.approx(f1_score(gold, probs >= [0.35, 0.5], average="macro"))

    values, targets = np.array([1.0, 2.5, 2.0, 4.0]), np.array([1.0, 2.0, 3.0, 4.0])
    regression = VALUES.validation_scores(targets, values)
    assert regression["spearman"] == pytest.approx(spearmanr(targets, values).statistic)
    assert regression["mse"] == regression["loss"] == pytest.approx((0.25 + 1) / 4)
    assert regression["mae"] == pytest.approx(1.5 / 4)


@pytest.mark.parametrize("problem", [MULTI_LABEL, REGRESSION])
def test_balanced_class_weights_are_refused_where_there_are_no_exclusive_classes(problem):
    with pytest.raises(UserError, match=rf"^--class-weight balanced .*\({problem}\); drop --class-weight"):
        kinds.get(problem).check_class_weight("balanced")
    kinds.get(problem).check_class_weight("none")
    SINGLE.check_class_weight("balanced")
    plan, args = TrainingPlan(1, 1, 1), SimpleNamespace(class_weight="balanced", patience=1, min_steps=0, batch_size=2)
    with pytest.raises(UserError, match="^--class-weight balanced"):  # the training configuration asks the kind
        TrainingConfig.for_classifier(args, plan, kinds.get(problem), np.zeros(4), 2)


def _fit(tmp_path: Path, problem: str, outputs: int, x: np.ndarray, y: np.ndarray) -> list[dict]:
    tf.keras.utils.set_random_seed(0)
    kind = kinds.get(problem)
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(outputs)])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss=kind.loss(), metrics=kind.metrics(2))
    data = tf.data.Dataset.from_tensor_slices((x, y)).batch(16)
    args = SimpleNamespace(
        patience=1, min_steps=0, max_steps=None, eval_steps=None, time_budget=None, class_weight="none", batch_size=16
    )
    config = TrainingConfig.for_classifier(args, TrainingPlan(3, 6, 18), kind, y, 2)
    summary = fit(model, data, data, tmp_path, config)
    assert summary["early_stopping"] == {"monitor": kind.monitor, "mode": "max"}
    history = read_history(tmp_path / HISTORY_FILE)
    best = max(history, key=lambda row: (row[kind.monitor], -row["epoch"]))
    assert summary["best_epoch"] == best["epoch"]
    targets, predicted = validation_outputs(model, data, kind)  # the restored best epoch's outputs
    np.testing.assert_array_equal(targets, y)
    return history, predicted


def test_fit_watches_validation_spearman_for_regression(tmp_path: Path):
    x = np.random.default_rng(0).normal(size=(40, 3)).astype(np.float32)
    y = (x @ np.array([1.0, -2.0, 0.5]) + 3).astype(np.float32)
    history, values = _fit(tmp_path, REGRESSION, 1, x, y)
    assert list(history[0])[1:4] == ["loss", "val_loss", "val_spearman"]  # no accuracy a regression model lacks
    best = max(history, key=lambda row: row["val_spearman"])
    assert best["val_spearman"] == pytest.approx(spearmanr(y, values).statistic, rel=1e-6)


def test_fit_watches_validation_macro_f1_at_tuned_thresholds_for_multi_label(tmp_path: Path):
    x = np.random.default_rng(1).normal(size=(40, 3)).astype(np.float32)
    y = np.stack([x[:, 0] > 0, x[:, 1] > 0.5], axis=1).astype(np.float32)
    history, probs = _fit(tmp_path, MULTI_LABEL, 2, x, y)
    assert list(history[0])[1:5] == ["loss", "val_loss", "macro_f1", "val_macro_f1"]
    best = max(history, key=lambda row: row["val_macro_f1"])
    tuned = probs >= np.asarray(choose_thresholds(probs, y))  # the thresholds the kept run will decide by
    assert best["val_macro_f1"] == pytest.approx(f1_score(y, tuned, average="macro", zero_division=0))


def test_fit_still_watches_validation_accuracy_for_single_label(tmp_path: Path):
    x = np.random.default_rng(2).normal(size=(40, 3)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64)
    history, probs = _fit(tmp_path, SINGLE_LABEL, 2, x, y)
    assert list(history[0])[1:5] == ["loss", "accuracy", "val_loss", "val_accuracy"]
    assert max(row["val_accuracy"] for row in history) == pytest.approx((probs.argmax(1) == y).mean())


def run_record(problem: str | None, validation: dict) -> dict:
    data = {"labels": ["a", "b"], "splits": {}, "fingerprints": {}, "options": {}}
    return {
        "schema_version": 1,
        "side": "finetune",
        "task_kind": "classification",
        "model": {"name": "m", "source": "s", "params": 1, "trainable_params": 1},
        "data": {**data, **({"problem_type": problem} if problem else {})},
        "hyperparameters": {},
        "training": {"seconds": 1, "epochs_run": 1, "best_epoch": 1, "history": [], "examples_per_second": 1},
        "validation": validation,
        "environment": {},
    }


def test_the_validation_a_run_must_record_follows_its_kind(tmp_path: Path):
    RunRecord.from_json(run_record(None, {"accuracy": 0.5, "macro_f1": 0.4}))  # an older run: single label
    RunRecord.from_json(run_record(MULTI_LABEL, {"macro_f1": 0.4, "micro_f1": 0.5}))
    with pytest.raises(RunError, match="lacks validation.micro_f1"):
        RunRecord.from_json(run_record(MULTI_LABEL, {"accuracy": 0.5, "macro_f1": 0.4}))
    with pytest.raises(RunError, match="lacks validation.spearman"):
        RunRecord.from_json(run_record(REGRESSION, {"accuracy": 0.5}))
    with pytest.raises(RunError, match="data.problem_type: problem_type must be one of"):
        RunRecord.from_json(run_record("ordinal", {}))


class Fixed(BaseClassifier):
    """A classifier whose outputs are given rows, to check what the base does around them."""

    side = "finetune"

    def __init__(self, rows: np.ndarray, **kwargs) -> None:
        super().__init__(**kwargs)
        self.rows, self.calls = np.asarray(rows, np.float32), 0

    def outputs(self, texts: list[str], text_pairs: list[str] | None = None) -> np.ndarray:
        self.calls += 1
        return self.rows[: len(texts)]


def test_a_run_record_gives_the_classifier_its_kind_an_older_run_is_single_label_on_single_texts():
    old = Fixed([[0.5, 0.5]], record=RunRecord.from_json(run_record(None, {"accuracy": 0.5, "macro_f1": 0.4})))
    assert (old.kind, old.problem_type, old.has_pairs, old.thresholds, old.labels) == (
        SINGLE,
        SINGLE_LABEL,
        False,
        None,
        ["a", "b"],
    )
    pair = run_record(REGRESSION, {"spearman": 0.1, "pearson": 0.1, "mse": 1.0})
    pair["data"]["text_pair_column"] = "sentence2"
    values = Fixed([1.0], record=RunRecord.from_json(pair))
    assert (values.kind, values.has_pairs, values.record.has_pairs) == (VALUES, True, True)
    multi = {**run_record(MULTI_LABEL, {"macro_f1": 0.4, "micro_f1": 0.5}), "thresholds": [0.3, 0.6]}
    chosen = Fixed([[0.3, 0.5]], record=RunRecord.from_json(multi))
    assert (chosen.kind, chosen.thresholds, chosen.name, chosen.side) == (MULTI, [0.3, 0.6], "finetune", "finetune")


def test_inputs_are_checked_against_the_kind_before_the_model_runs():
    pairs = Fixed([1.0], kind=VALUES, has_pairs=True)
    single = Fixed([[0.25, 0.75]], kind=SINGLE, labels=["a", "b"])
    pairs.predict_values(["a"], ["b"])
    single.predict_proba(["a"])
    with pytest.raises(ValueError, match="^this model reads text pairs: pass text_pairs"):
        pairs.predict_values(["a"])
    with pytest.raises(ValueError, match="^this model reads single texts: pass no text_pairs"):
        single.predict_proba(["a"], ["b"])
    with pytest.raises(ValueError, match="^got 2 texts but 1 text_pairs"):
        pairs.predict_values(["a", "b"], ["c"])
    with pytest.raises(ValueError, match="^a regression model gives values: call predict_values, not predict_proba"):
        pairs.predict_proba(["a"], ["b"])
    with pytest.raises(ValueError, match="call predict_proba, not predict_values"):
        single.predict_values(["a"])
    assert (pairs.calls, single.calls) == (1, 1)


def test_empty_inputs_have_the_kind_s_shape_without_running_the_model():
    assert Fixed([[0.5, 0.5]], kind=SINGLE, labels=["a", "b"]).predict_proba([]).shape == (0, 2)
    assert Fixed([[0.5, 0.5, 0.5]], kind=MULTI, labels=["a", "b", "c"]).predict_proba([]).shape == (0, 3)
    empty = Fixed([1.0], kind=VALUES)
    assert empty.predict_values([]).shape == (0,) and empty.calls == 0


def test_single_label_rows_are_renormalised_to_sum_to_one():
    rows = np.array([[0.2, 0.6], [0.5, 0.5]], np.float32)  # a runtime that misses 1 by more than a rounding error
    probs = Fixed(rows, kind=SINGLE, labels=["a", "b"]).predict_proba(["x", "y"])
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(probs[0], [0.25, 0.75], rtol=1e-6)
    multi = Fixed(rows, kind=MULTI, labels=["a", "b"]).predict_proba(["x", "y"])
    np.testing.assert_array_equal(multi, rows)  # each label's own probability: left as it is


def test_predict_gives_the_kind_s_decisions():
    probs = np.array([[0.2, 0.7, 0.1], [0.5, 0.3, 0.45]], np.float32)
    three = ["a", "b", "c"]
    single = Fixed(probs / probs.sum(axis=1, keepdims=True), kind=SINGLE, labels=three)
    np.testing.assert_array_equal(single.predict(["x", "y"]), [1, 0])
    multi = Fixed(probs, kind=MULTI, labels=three, thresholds=[0.5, 0.3, 0.4])
    np.testing.assert_array_equal(multi.predict(["x", "y"]), [[0, 1, 0], [1, 1, 1]])  # at the threshold: chosen
    np.testing.assert_allclose(Fixed([2.5, -1.0], kind=VALUES).predict(["x", "y"]), [2.5, -1.0])


def test_what_the_training_side_asks_each_kind():
    assert [k.has_labels for k in (SINGLE, MULTI, VALUES)] == [True, True, False]
    assert [k.watches_all_outputs for k in (SINGLE, MULTI, VALUES)] == [False, True, True]
    assert [k.smooths_labels for k in (SINGLE, MULTI, VALUES)] == [True, False, False]
    assert [k.reads_label_columns for k in (SINGLE, MULTI, VALUES)] == [False, True, False]


# --- rare labels (the fine-tuned side's --focal-gamma) ------------------------------------------------------------


def test_the_multi_label_focal_loss_is_the_hand_worked_focal_cross_entropy():
    logits = np.array([[2.0, -1.0, 0.5], [-3.0, 0.0, 1.5]], np.float32)
    targets = np.array([[1, 0, 0], [0, 0, 1]], np.float32)
    p = 1 / (1 + np.exp(-logits.astype(np.float64)))
    p_t = np.where(targets == 1, p, 1 - p)
    by_hand = np.mean((1 - p_t) ** 2 * -np.log(p_t))  # Lin et al. 2017, alpha left out
    focal = kinds.get("multi_label_classification").focal_loss(2.0)
    assert float(focal(tf.constant(targets), tf.constant(logits))) == pytest.approx(by_hand, rel=1e-5)
    plain = kinds.get("multi_label_classification").loss()(tf.constant(targets), tf.constant(logits))
    assert float(kinds.get("multi_label_classification").focal_loss(0.0)(targets, logits)) == pytest.approx(
        float(plain)
    )
    for name in ("single_label_classification", "regression"):
        with pytest.raises(UserError, match="--focal-gamma is for multi-label tasks"):
            kinds.get(name).focal_loss(2.0)
