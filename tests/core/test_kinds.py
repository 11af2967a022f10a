"""What training depends on per kind of problem (`core.kinds`), checked on hand-worked cases and against
scikit-learn and SciPy; `fit_classifier` watching each kind's headline; the run record's thresholds and validation;
and the `Classifier` protocol's input checks and decisions."""

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
from core.budget import TrainingPlan
from core.callbacks import fit_classifier
from core.classifier import Kind, check_inputs, decide
from core.errors import UserError
from core.multilabel import choose_thresholds
from core.rundir import RunError, validate_run
from core.tasks import MULTI_LABEL, REGRESSION, SINGLE_LABEL
from core.training_log import HISTORY_FILE, read_history


def test_each_kind_watches_its_headline_in_the_validation_logs():
    assert [kinds.monitor(k) for k in (SINGLE_LABEL, MULTI_LABEL, REGRESSION)] == [
        "val_accuracy",
        "val_macro_f1",
        "val_spearman",
    ]
    with pytest.raises(ValueError, match="problem_type must be one of single_label_classification, "):
        kinds.monitor("ordinal")


def test_the_losses_from_logits_on_hand_worked_cases():
    logits = tf.constant([[0.0, math.log(3.0)]])  # softmax (1/4, 3/4)
    assert float(kinds.loss(SINGLE_LABEL)(tf.constant([1]), logits)) == pytest.approx(-math.log(0.75), rel=1e-6)
    # sigmoid(0) = 1/2 and sigmoid(ln 3) = 3/4: the labels' losses -ln(1/2) and -ln(1/4), averaged
    multi = kinds.loss(MULTI_LABEL)(tf.constant([[1.0, 0.0]]), logits)
    assert float(multi) == pytest.approx((math.log(2) + math.log(4)) / 2, rel=1e-6)
    # one output per example (B, 1) against targets (B,): no broadcasting to (B, B)
    values = tf.constant([[1.0], [3.0]])
    assert float(kinds.loss(REGRESSION)(tf.constant([2.0, 5.0]), values)) == pytest.approx((1 + 4) / 2)


def test_outputs_are_softmax_sigmoid_or_the_value():
    logits = tf.constant([[0.0, math.log(3.0)]])
    np.testing.assert_allclose(kinds.activate(SINGLE_LABEL, logits), [[0.25, 0.75]], rtol=1e-6)
    np.testing.assert_allclose(kinds.activate(MULTI_LABEL, logits), [[0.5, 0.75]], rtol=1e-6)
    values = kinds.activate(REGRESSION, tf.constant([[1.5], [-2.0]]))
    assert values.shape == (2,) and values.dtype == tf.float32
    np.testing.assert_array_equal(values, [1.5, -2.0])


def test_macro_f1_over_batches_equals_scikit_learns_at_one_half():
    rng = np.random.default_rng(0)
    gold = (rng.random((30, 4)) < 0.3).astype(np.float32)
    gold[:, 3] = 0  # a label never present
    logits = rng.normal(size=(30, 4)).astype(np.float32)
    logits[:, 3] = -1.0  # and never predicted: F1 0, as scikit-learn's zero_division=0
    metric = kinds.MacroF1(4)
    for start in range(0, 30, 8):  # batches accumulate counts, not batch F1s
        metric.update_state(gold[start : start + 8], logits[start : start + 8])
    expected = f1_score(gold, logits >= 0, average="macro", zero_division=0)
    assert float(metric.result()) == pytest.approx(expected, rel=1e-6)
    metric.reset_state()
    assert float(metric.result()) == 0.0
    assert kinds.MacroF1.from_config(metric.get_config()).num_labels == 4


def test_thresholds_are_chosen_on_validation_for_multi_label_only():
    probs = np.array([[0.9, 0.2], [0.6, 0.4], [0.3, 0.1], [0.2, 0.3]])
    gold = np.array([[1, 0], [1, 0], [0, 0], [1, 0]])
    assert kinds.thresholds(MULTI_LABEL, probs, gold) == [0.2, 0.5]  # label 1 absent: the fallback
    assert kinds.thresholds(MULTI_LABEL, probs, gold) == choose_thresholds(probs, gold).tolist()
    assert kinds.thresholds(SINGLE_LABEL, probs, np.array([0, 0, 1, 1])) is None
    assert kinds.thresholds(REGRESSION, probs[:, 0], probs[:, 1]) is None


def test_validation_scores_of_each_kind_on_hand_worked_cases():
    probs = np.array([[0.8, 0.2], [0.4, 0.6], [0.9, 0.1]])
    single = kinds.validation_scores(SINGLE_LABEL, np.array([0, 0, 0]), probs)
    assert single["accuracy"] == pytest.approx(2 / 3)
    assert single["macro_f1"] == pytest.approx(f1_score([0, 0, 0], [0, 1, 0], labels=[0, 1], average="macro"))
    assert single["loss"] == pytest.approx(-(math.log(0.8) + math.log(0.4) + math.log(0.9)) / 3)

    gold = np.array([[1, 0], [1, 1], [0, 0]], np.float32)
    multi = kinds.validation_scores(MULTI_LABEL, gold, probs, [0.5, 0.5])
    decided = probs >= 0.5  # [[1, 0], [0, 1], [1, 0]]
    assert multi["macro_f1"] == pytest.approx(f1_score(gold, decided, average="macro", zero_division=0))
    assert multi["micro_f1"] == pytest.approx(f1_score(gold, decided, average="micro", zero_division=0))
    assert multi["subset_accuracy"] == pytest.approx(1 / 3)  # the first row only
    assert multi["hamming_loss"] == pytest.approx(2 / 6)
    bce = -(np.log([0.8, 0.8, 0.4, 0.6, 0.1, 0.9])).mean()  # each label's probability of its gold value
    assert multi["loss"] == pytest.approx(bce)
    lowered = kinds.validation_scores(MULTI_LABEL, gold, probs, [0.35, 0.5])  # the run's thresholds decide
    assert lowered["macro_f1"] == pytest.approx(f1_score(gold, probs >= [0.35, 0.5], average="macro"))

    values, targets = np.array([1.0, 2.5, 2.0, 4.0]), np.array([1.0, 2.0, 3.0, 4.0])
    regression = kinds.validation_scores(REGRESSION, targets, values)
    assert regression["spearman"] == pytest.approx(spearmanr(targets, values).statistic)
    assert regression["mse"] == regression["loss"] == pytest.approx((0.25 + 1) / 4)
    assert regression["mae"] == pytest.approx(1.5 / 4)


@pytest.mark.parametrize("problem", [MULTI_LABEL, REGRESSION])
def test_balanced_class_weights_are_refused_where_there_are_no_exclusive_classes(problem):
    with pytest.raises(UserError, match=rf"^--class-weight balanced .*\({problem}\); drop --class-weight"):
        kinds.check_class_weight("balanced", problem)
    kinds.check_class_weight("none", problem)
    kinds.check_class_weight("balanced", SINGLE_LABEL)


def _fit(tmp_path: Path, problem: str, outputs: int, x: np.ndarray, y: np.ndarray) -> list[dict]:
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(outputs)])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss=kinds.loss(problem), metrics=kinds.metrics(problem, 2))
    data = tf.data.Dataset.from_tensor_slices((x, y)).batch(16)
    args = SimpleNamespace(patience=1, min_steps=0, max_steps=None, eval_steps=None, class_weight="none", batch_size=16)
    summary = fit_classifier(model, data, data, tmp_path, args, TrainingPlan(3, 6, 18), y, 2, problem)
    assert summary["early_stopping"] == {"monitor": kinds.monitor(problem), "mode": "max"}
    history = read_history(tmp_path / HISTORY_FILE)
    best = max(history, key=lambda row: (row[kinds.monitor(problem)], -row["epoch"]))
    assert summary["best_epoch"] == best["epoch"]
    targets, predicted = kinds.dataset_outputs(model, data, problem)  # the restored best epoch's outputs
    np.testing.assert_array_equal(targets, y)
    return history, predicted


def test_fit_watches_validation_spearman_for_regression(tmp_path: Path):
    x = np.random.default_rng(0).normal(size=(40, 3)).astype(np.float32)
    y = (x @ np.array([1.0, -2.0, 0.5]) + 3).astype(np.float32)
    history, values = _fit(tmp_path, REGRESSION, 1, x, y)
    assert list(history[0])[1:4] == ["loss", "val_loss", "val_spearman"]  # no accuracy a regression model lacks
    best = max(history, key=lambda row: row["val_spearman"])
    assert best["val_spearman"] == pytest.approx(spearmanr(y, values).statistic, rel=1e-6)


def test_fit_watches_validation_macro_f1_for_multi_label(tmp_path: Path):
    x = np.random.default_rng(1).normal(size=(40, 3)).astype(np.float32)
    y = np.stack([x[:, 0] > 0, x[:, 1] > 0.5], axis=1).astype(np.float32)
    history, probs = _fit(tmp_path, MULTI_LABEL, 2, x, y)
    assert list(history[0])[1:5] == ["loss", "val_loss", "macro_f1", "val_macro_f1"]
    best = max(history, key=lambda row: row["val_macro_f1"])
    assert best["val_macro_f1"] == pytest.approx(f1_score(y, probs >= 0.5, average="macro", zero_division=0))


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


def test_the_validation_a_run_must_record_follows_its_problem_type(tmp_path: Path):
    validate_run(run_record(None, {"accuracy": 0.5, "macro_f1": 0.4}), tmp_path)  # an older run: single label
    validate_run(run_record(MULTI_LABEL, {"macro_f1": 0.4, "micro_f1": 0.5}), tmp_path)
    with pytest.raises(RunError, match="'validation' lacks micro_f1"):
        validate_run(run_record(MULTI_LABEL, {"accuracy": 0.5, "macro_f1": 0.4}), tmp_path)
    with pytest.raises(RunError, match="'validation' lacks spearman, pearson, mse"):
        validate_run(run_record(REGRESSION, {"accuracy": 0.5}), tmp_path)
    with pytest.raises(RunError, match="data.problem_type 'ordinal' is not one of"):
        validate_run(run_record("ordinal", {}), tmp_path)


def test_a_run_json_gives_the_kind_an_older_run_is_single_label_on_single_texts():
    old = run_record(None, {})
    assert Kind.of_run(old) == Kind(SINGLE_LABEL, False, None)
    pair = run_record(REGRESSION, {})
    pair["data"]["text_pair_column"] = "sentence2"
    assert Kind.of_run(pair) == Kind(REGRESSION, True, None)
    multi = {**run_record(MULTI_LABEL, {}), "thresholds": [0.3, 0.6]}
    assert Kind.of_run(multi) == Kind(MULTI_LABEL, False, [0.3, 0.6])


def test_inputs_are_checked_against_the_kind():
    pairs, single = Kind(REGRESSION, True, None), Kind(SINGLE_LABEL, False, None)
    check_inputs(pairs, ["a"], ["b"], "values")
    check_inputs(single, ["a"], None, "probabilities")
    with pytest.raises(ValueError, match="^this model reads text pairs: pass text_pairs"):
        check_inputs(pairs, ["a"], None, "values")
    with pytest.raises(ValueError, match="^this model reads single texts: pass no text_pairs"):
        check_inputs(single, ["a"], ["b"], "probabilities")
    with pytest.raises(ValueError, match="^got 2 texts but 1 text_pairs"):
        check_inputs(pairs, ["a", "b"], ["c"], "values")
    with pytest.raises(ValueError, match="call predict_values, not predict_proba"):
        check_inputs(pairs, ["a"], ["b"], "probabilities")
    with pytest.raises(ValueError, match="call predict_proba, not predict_values"):
        check_inputs(single, ["a"], None, "values")


def test_decisions_are_the_argmax_or_each_labels_threshold():
    probs = np.array([[0.2, 0.7, 0.1], [0.5, 0.3, 0.45]], np.float32)
    np.testing.assert_array_equal(decide(Kind(SINGLE_LABEL, False, None), probs), [1, 0])
    chosen = decide(Kind(MULTI_LABEL, False, [0.5, 0.3, 0.45]), probs)
    np.testing.assert_array_equal(chosen, [[False, True, False], [True, True, True]])  # at the threshold: chosen
    with pytest.raises(ValueError, match="regression model decides nothing"):
        decide(Kind(REGRESSION, False, None), probs[:, 0])
