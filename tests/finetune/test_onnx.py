"""The fine-tuned run's `model.onnx`: written at the end of training, checked, and served by `core.classifier.load`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from core.classifier import load
from core.onnx import MAX_DIFFERENCE, check
from core.record import read_run
from core.rundir import RunError
from finetune.predict import load as load_side
from tests.conftest import NEGATIVE, POSITIVE

# Lengths from 1 to 16 tokens (the long one is cut), so batches hold padding.
TEXTS = [*POSITIVE, *NEGATIVE, "", "not", "a great film and a dull mess " * 4]


def test_a_finished_run_is_served_through_its_checked_onnx_model(base_run: Path) -> None:
    run = read_run(base_run)
    serving = run.serving
    assert serving["runtime"] == "onnxruntime" and (base_run / serving["file"]).is_file()
    assert serving["checked_on"] == "validation" and serving["label_agreement"] == 1.0
    assert 0 <= serving["max_abs_difference"] <= MAX_DIFFERENCE

    served = load(base_run)
    assert served.runtime == "onnxruntime"
    tensorflow = load_side(base_run, run, runtime="tensorflow")
    assert tensorflow.runtime == "tensorflow"
    expected = tensorflow.predict_proba(TEXTS)
    np.testing.assert_allclose(served.predict_proba(TEXTS), expected, atol=1e-5)
    # One text at a time (no padding) gives what the padded batches gave.
    alone = np.concatenate([served.predict_proba([text]) for text in TEXTS])
    np.testing.assert_allclose(alone, expected, atol=1e-5)
    assert served.model.count_params() == run.model.params  # the TF model is still there, loaded on use


@pytest.mark.slow  # a child process that imports TensorFlow and loads the model
def test_a_large_model_is_converted_in_a_child_process_to_the_same_outputs(
    base_run: Path, tmp_path: Path, monkeypatch
) -> None:
    from finetune import onnx

    served = load(base_run)
    monkeypatch.setattr(onnx, "IN_PROCESS_WEIGHTS", 0)  # the tiny model counts as large: `python -m finetune.onnx`
    monkeypatch.setattr(onnx, "convert_model", lambda *args: pytest.fail("converted in this process"))
    onnx.convert_run_model(served.model, base_run, tmp_path / "child.onnx")
    tokens = served.tokenizer(TEXTS, padding=True, truncation=True, max_length=16, return_tensors="np")
    inputs = (tokens["input_ids"], tokens["attention_mask"])
    expected = onnx.OnnxForward(base_run / "model.onnx")(*inputs)  # converted in the run's process
    np.testing.assert_allclose(onnx.OnnxForward(tmp_path / "child.onnx")(*inputs), expected, atol=1e-6)


def test_a_small_model_is_converted_in_this_process(base_run: Path, tmp_path: Path, monkeypatch) -> None:
    from finetune import onnx

    monkeypatch.setattr(onnx, "convert_saved", lambda *args: pytest.fail("started a child process"))
    model = load(base_run).model
    assert model.count_params() < onnx.IN_PROCESS_WEIGHTS
    assert onnx.convert_run_model(model, base_run, tmp_path / "model.onnx") > 0
    assert (tmp_path / "model.onnx").stat().st_size > 4 * model.count_params()  # float32 weights inside


def test_a_run_whose_onnx_file_is_gone_names_it(base_run: Path, tmp_path: Path) -> None:
    copy = tmp_path / "run"
    shutil.copytree(base_run, copy)
    (copy / "model.onnx").unlink()
    with pytest.raises(RunError, match=r"has no model.onnx, which its run.json serves it through"):
        load(copy)
    record = json.loads((copy / "run.json").read_text())
    record["serving"] = {"runtime": "tensorflow"}
    (copy / "run.json").write_text(json.dumps(record))
    assert load(copy).runtime == "tensorflow"


def test_the_check_keeps_only_a_model_that_reproduces_the_labels_and_probabilities() -> None:
    reference = np.array([[0.9, 0.1], [0.4, 0.6], [0.5001, 0.4999]])
    assert check(reference, reference + 5e-5)["ok"]
    off = check(reference, reference + np.array([[3e-4, -3e-4], [0, 0], [0, 0]]))
    assert not off["ok"] and off["max_abs_difference"] == pytest.approx(3e-4)
    flipped = reference.copy()
    flipped[2] = [0.4999, 0.5001]  # within 1e-4, but another label
    result = check(reference, flipped)
    assert not result["ok"] and result["label_agreement"] == pytest.approx(2 / 3)
