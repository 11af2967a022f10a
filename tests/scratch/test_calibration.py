"""A from-scratch run's calibration: recorded in run.json, applied by `predict_proba`, and absent from old runs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core.calibration import softmax_calibrated
from core.classifier import load
from core.record import read_run
from core.rundir import RUN_JSON

TEXTS = ["a great film", "a dull mess", "moving and funny"]


def test_a_run_written_before_calibration_loads_and_predicts_at_temperature_one(tiny_run: Path, tmp_path: Path) -> None:
    run = tmp_path / "old"
    shutil.copytree(tiny_run, run)
    body = json.loads((run / RUN_JSON).read_text())
    assert "calibration" in body  # a run trained now records its calibration
    calibrated = load(run).predict_proba(TEXTS)
    del body["calibration"]
    (run / RUN_JSON).write_text(json.dumps(body))
    record = read_run(run)
    assert record.calibration is None and record.temperatures is None
    model = load(run)
    raw = model.outputs(TEXTS)
    np.testing.assert_allclose(model.predict_proba(TEXTS), raw, atol=1e-6)
    temperatures = json.loads((tiny_run / RUN_JSON).read_text())["calibration"]["temperatures"]
    np.testing.assert_allclose(calibrated, softmax_calibrated(raw, temperatures), atol=1e-6)


def with_temperature(run: Path, folder: Path, temperatures: list[float]) -> Path:
    """A copy of `run` whose run.json records `temperatures`, so that calibration visibly changes its outputs."""
    copy = folder / "calibrated"
    shutil.copytree(run, copy)
    body = json.loads((copy / RUN_JSON).read_text())
    body["calibration"]["temperatures"] = temperatures
    (copy / RUN_JSON).write_text(json.dumps(body))
    return copy


@pytest.mark.slow  # an export, and a fresh process
def test_the_export_and_the_onnx_served_run_give_predict_proba_s_calibrated_probabilities(
    tiny_run: Path, tmp_path: Path
) -> None:
    from scratch.__main__ import main
    from tests.scratch.test_export import FRESH_PROCESS

    run = with_temperature(tiny_run, tmp_path, [2.5])
    model = load(run)
    expected = model.predict_proba(TEXTS)
    assert np.abs(expected - model.outputs(TEXTS)).max() > 0.01  # the temperature matters on these texts
    assert main(["export", str(run), "--output-dir", str(tmp_path / "export")]) == 0
    export = json.loads((tmp_path / "export" / "export.json").read_text())
    assert export["calibration"]["temperatures"] == [2.5]
    # One fresh process: the export served by TensorFlow with no project code imported (`FRESH_PROCESS`), then the
    # run's own model.onnx served by ONNX Runtime through predict_proba.
    then_the_run = (
        "\nfrom core.classifier import load\n"
        "model = load(sys.argv[2])\nassert model.runtime == 'onnxruntime'\n"
        "print(json.dumps(model.predict_proba(json.loads(sys.argv[3])).tolist()))"
    )
    export_job = [(str(tmp_path / "export"), {"text": TEXTS}, "probabilities")]
    done = subprocess.run(
        [sys.executable, "-c", FRESH_PROCESS + then_the_run, json.dumps(export_job), str(run), json.dumps(TEXTS)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parents[2],
    )
    *_, exported, onnx = done.stdout.strip().splitlines()
    np.testing.assert_allclose(np.array(json.loads(exported)[0]), expected, atol=1e-4)
    np.testing.assert_allclose(np.array(json.loads(onnx)), expected, atol=1e-4)
