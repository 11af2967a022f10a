"""A fine-tuned run's calibration reaches every export: the SavedModel, the int8 TFLite and both ONNX files give the
calibrated probabilities of `predict_proba`, in a fresh process."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from core.classifier import load
from core.rundir import RUN_JSON
from finetune.__main__ import main
from tests.finetune.test_export import FRESH_ONNX_PROCESS, TEXTS, fresh_process_probabilities


@pytest.mark.slow  # an export of the tiny run, and two fresh processes
def test_every_export_gives_the_calibrated_probabilities_of_predict_proba(base_run: Path, tmp_path: Path) -> None:
    run = tmp_path / "calibrated"
    shutil.copytree(base_run, run)
    body = json.loads((run / RUN_JSON).read_text())
    assert body["calibration"]["method"] == "temperature"
    body["calibration"]["temperatures"] = [0.2]  # a sharper model, so that calibration visibly changes the outputs
    (run / RUN_JSON).write_text(json.dumps(body))

    model = load(run)
    expected = model.predict_proba(TEXTS)
    assert np.abs(expected - model.outputs(TEXTS)).max() > 0.01
    export = tmp_path / "export"
    assert main(["export", str(run), "--output-dir", str(export), "--no-evaluate"]) == 0
    served = fresh_process_probabilities(export, TEXTS, tmp_path)
    np.testing.assert_allclose(served["float"], expected, atol=1e-4)
    np.testing.assert_array_equal(served["int8"].argmax(axis=1), expected.argmax(axis=1))
    onnx = fresh_process_probabilities(export, TEXTS, tmp_path, FRESH_ONNX_PROCESS)
    np.testing.assert_allclose(onnx["float"], expected, atol=1e-4)
    np.testing.assert_allclose(onnx["int8"].sum(axis=1), 1.0, atol=1e-5)
    assert json.loads((export / "export.json").read_text())["calibration"]["temperatures"] == [0.2]
