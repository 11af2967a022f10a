"""A classifier's validation from its outputs (`core.training.validation`): the logs Keras' own evaluation gave, from
one pass, the outputs back in the split's order, and the kept weights' outputs after `fit`."""

from __future__ import annotations

import logging
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import tensorflow as tf

from core import kinds
from core.kinds.keras_objects import SparseCrossentropy
from core.training import TrainingConfig, fit
from core.training.budget import TrainingPlan
from core.training.log import HISTORY_FILE, read_history
from core.training.validation import ValidationOutputs, final_validation, row_order

SINGLE, MULTI = kinds.get("single_label_classification"), kinds.get("multi_label_classification")


def _data(kind, n: int = 40) -> tuple[np.ndarray, np.ndarray]:
    x = np.random.default_rng(0).normal(size=(n, 3)).astype(np.float32)
    if kind is MULTI:
        return x, np.stack([x[:, 0] > 0, x[:, 1] > 0.5], axis=1).astype(np.float32)
    return x, (x[:, 0] + 0.3 * x[:, 2] > 0).astype(np.int64)


def _model(kind, loss=None) -> tf.keras.Model:
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss=loss or kind.loss(), metrics=kind.metrics(2))
    return model


def _shuffled(x: np.ndarray, y: np.ndarray) -> tuple[tf.data.Dataset, np.ndarray]:
    """The rows in another order, as a length-sorted pipeline yields them, and that order found by `row_order`."""
    order = np.random.default_rng(1).permutation(len(x))
    indexed = tf.data.Dataset.from_tensor_slices((x[order], order)).batch(7)
    return tf.data.Dataset.from_tensor_slices((x[order], y[order])).batch(7), row_order(indexed)


@pytest.mark.parametrize("kind, loss", [(SINGLE, None), (SINGLE, SparseCrossentropy(0.2)), (MULTI, None)])
def test_one_pass_gives_the_logs_keras_evaluation_gave_and_the_outputs_in_the_split_s_order(kind, loss) -> None:
    x, y = _data(kind)
    model = _model(kind, loss)
    model.fit(x, y, epochs=1, batch_size=8, verbose=0)
    dataset, order = _shuffled(x, y)
    validating = ValidationOutputs(dataset, kind, order)
    validating.set_model(model)
    validated = validating.validate()

    keras = model.evaluate(dataset, return_dict=True, verbose=0)
    assert validated.logs["val_loss"] == pytest.approx(keras["loss"], rel=1e-5)  # label smoothing included
    outputs = kind.activate(model.predict(x, verbose=0)).numpy()  # in the split's order
    np.testing.assert_allclose(validated.outputs, outputs, atol=1e-6)
    if kind is SINGLE:
        assert set(validated.logs) == {"val_loss", "val_accuracy"}
        assert validated.logs["val_accuracy"] == pytest.approx(keras["accuracy"])
    else:  # at the thresholds chosen on these outputs, as the kept run decides (Keras' own is at 0.5)
        assert set(validated.logs) == {"val_loss", "val_macro_f1"}
        assert validated.logs["val_macro_f1"] == pytest.approx(kind.monitored_score(y, outputs))
    assert validated.weights == f"step {int(model.optimizer.iterations.numpy())}"


@pytest.mark.parametrize("average_last", [1, 2])
def test_fit_validates_once_per_epoch_and_keeps_the_outputs_of_the_weights_it_ends_with(
    tmp_path: Path, average_last: int
) -> None:
    x, y = _data(MULTI)
    model = _model(MULTI)
    model.evaluate = None  # Keras' own evaluation would be a second pass per validation: fit must not run it
    dataset, order = _shuffled(x, y)
    validating = ValidationOutputs(dataset, MULTI, order)
    passes = []
    validate = validating.validate
    validating.validate = lambda *args: passes.append(1) or validate(*args)
    args = SimpleNamespace(
        patience=2, min_steps=0, max_steps=None, eval_steps=None, time_budget=None, class_weight="none", batch_size=8
    )
    config = TrainingConfig.for_classifier(args, TrainingPlan(4, 5, 20), MULTI, y, 2)
    config = type(config)(**{**config.__dict__, "average_last": average_last})
    train = tf.data.Dataset.from_tensor_slices((x, y)).batch(8)
    summary = fit(model, train, dataset, tmp_path, config, callbacks=[validating])

    history = read_history(tmp_path / HISTORY_FILE)
    assert len(passes) == len(history) + (1 if summary["averaged"] else 0)  # one per epoch, and the average's
    kept = validating.kept
    fresh = MULTI.activate(model.predict(x, verbose=0)).numpy()  # the weights the model ends with
    np.testing.assert_allclose(kept.outputs, fresh, atol=1e-6)
    if summary["averaged"] and summary["averaged"]["kept"]:
        assert kept.weights.startswith("the average of epochs")
    else:
        best = history[summary["best_epoch"] - 1]
        assert kept.weights == f"step {best['steps']}"
        assert kept.logs["val_macro_f1"] == pytest.approx(best["val_macro_f1"])
    assert all(row["train_seconds"] > 0 for row in history)


def test_the_final_figures_come_from_the_kept_outputs_else_from_one_pass(caplog) -> None:
    x, y = _data(MULTI)
    model = _model(MULTI)
    validating = ValidationOutputs(tf.data.Dataset.from_tensor_slices((x, y)).batch(16), MULTI)
    validating.set_model(model)
    kept = validating.validate()
    passes = []

    def one_pass() -> np.ndarray:
        passes.append(1)
        return kept.outputs

    with caplog.at_level(logging.INFO, logger="core.training.validation"):
        from_kept = final_validation(MULTI, y, kept, one_pass)
        assert passes == [] and "come from the kept weights' validation (step 0)" in caplog.text
        from_pass = final_validation(MULTI, y, None, one_pass)
        assert passes == [1] and "one pass over validation" in caplog.text
    calibration = MULTI.calibration.fit(kept.outputs, y)
    calibrated = MULTI.calibration.apply(kept.outputs, calibration["temperatures"])
    thresholds = MULTI.choose_thresholds(calibrated, y)
    for final in (from_kept, from_pass):
        assert final.temperatures == calibration["temperatures"] and final.thresholds == thresholds
        assert final.scores == MULTI.validation_scores(y, calibrated, thresholds)


def _train_multi_label(side: str, folder: Path) -> Path:
    """A tiny multi-label run of `side` on single texts, a few steps, served through TensorFlow."""
    from tests.finetune.tiny import kind_options, write_kind_csv

    train_file = write_kind_csv(folder / "train.csv", MULTI.name, False, n=120)
    options = {**kind_options(MULTI.name, False), "no_onnx": True}
    if side == "finetune":
        from tests.finetune.tiny import train_tiny_run

        return train_tiny_run(folder / side, train_file, epochs=2, **options)
    from tests.scratch.tiny import train_tiny_run

    return train_tiny_run(folder / side, train_file, epochs=3, max_steps=24, **options)


@pytest.mark.slow
@pytest.mark.parametrize("side", ["finetune", "scratch"])
def test_a_run_s_final_figures_are_a_fresh_pass_s_over_its_kept_weights_without_that_pass(
    side: str, tmp_path: Path, monkeypatch, caplog
) -> None:
    import finetune.predict
    import scratch.train
    from core.args import DataArguments
    from core.classifier import load
    from core.data import load_task
    from core.record import read_run

    passes = []  # the predict paths a side's run could take over validation after training
    outputs = finetune.predict.FinetunedClassifier.outputs
    monkeypatch.setattr(
        finetune.predict.FinetunedClassifier, "outputs", lambda *args: passes.append("finetune") or outputs(*args)
    )
    logits = scratch.train.predict_logits
    monkeypatch.setattr(scratch.train, "predict_logits", lambda *args: passes.append("scratch") or logits(*args))
    with caplog.at_level(logging.INFO, logger="core.training.validation"):
        run_dir = _train_multi_label(side, tmp_path)
    assert passes == []
    run = read_run(run_dir)
    steps = run.training.history[run.training.best_epoch - 1]["steps"]
    assert f"come from the kept weights' validation (step {steps})" in caplog.text

    model = load(run_dir)  # the restored weights, read back; a fresh pass over validation
    task = load_task(DataArguments(**run.data.options))
    gold = task.targets("validation")
    fresh = model.outputs(task.texts("validation"), task.text_pairs("validation"))
    calibration = MULTI.calibration.fit(fresh, gold)
    calibrated = MULTI.calibration.apply(fresh, calibration["temperatures"])
    thresholds = MULTI.choose_thresholds(calibrated, gold)
    np.testing.assert_allclose(run.temperatures, calibration["temperatures"], atol=1e-5)
    np.testing.assert_allclose(run.thresholds, thresholds, atol=1e-5)
    scores = MULTI.validation_scores(gold, calibrated, thresholds)
    assert run.validation == pytest.approx(scores, abs=1e-5)
