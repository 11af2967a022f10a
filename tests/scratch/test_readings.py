"""`python -m scratch --pair-reading`: each reading of a pair task trained end to end on a tiny fixture, recorded in
run.json, served as its saved model computes it (ONNX Runtime and the SavedModel export included), and refused for
single texts before any run directory."""

from __future__ import annotations

import numpy as np
import pytest

from core.record import read_run
from core.tasks import REGRESSION, SINGLE_LABEL
from scratch import predict
from scratch.__main__ import main
from scratch.config import PAIR_READING_NOTES
from tests.scratch.kinds import kind_argv, write_kind_file
from tests.scratch.test_export import served_in_a_fresh_process
from tests.scratch.tiny import refuse, tiny_argv, train_tiny_run

PAIRS = (["a great film", "dull and slow", "superb"], ["truly moving", "a great film, superb acting", "boring"])


def reading_run(folder, reading: str, problem_type: str = SINGLE_LABEL, **overrides):
    train_file = write_kind_file(folder / "train.csv", problem_type, pairs=True, n=60)
    options = {**kind_argv(problem_type, True), "max_steps": 3, "pair_reading": reading, **overrides}
    return train_tiny_run(folder / "run", train_file, **options)


@pytest.fixture(scope="module")
def reading_runs(tmp_path_factory):
    """`reading_runs(reading)`: a finished tiny run of that reading, trained once for the module. Joint and siamese
    read a single-label task and skip the ONNX step; cross reads a regression task and keeps its ONNX model."""
    runs = {}

    def get(reading: str):
        if reading not in runs:
            folder = tmp_path_factory.mktemp(reading)
            if reading == "cross":
                runs[reading] = reading_run(folder, reading, REGRESSION)
            else:
                runs[reading] = reading_run(folder, reading, no_onnx=True)
        return runs[reading]

    return get


@pytest.mark.slow
@pytest.mark.parametrize("reading", ["joint", "siamese", "cross"])
def test_each_reading_trains_records_itself_and_serves_what_the_saved_model_computes(reading, reading_runs):
    run_dir = reading_runs(reading)
    run = read_run(run_dir)
    assert run.model.config["pair_reading"] == reading
    assert run.hyperparameters["pair_reading"] == reading
    assert PAIR_READING_NOTES[reading] in " ".join((run_dir / "README.md").read_text().split())  # the model card
    model = predict.load(run_dir, run, runtime="tensorflow")
    keras = model.model(dict(zip(("text", "text_pair"), map(np.array, PAIRS))), training=False).numpy()
    calibrated = run.kind.calibration.apply(keras, run.temperatures)  # the run's temperatures, fitted after training
    outputs = model.predict_values if run.data.problem_type == REGRESSION else model.predict_proba
    # float32 rounding, relative to a regression value's size as to a probability's
    np.testing.assert_allclose(outputs(*PAIRS), calibrated, rtol=1e-6, atol=1e-6)
    tokens, maps = model.explain(PAIRS[0][0], PAIRS[1][0])  # the app's attention view works for every reading
    assert tokens[:4] == ["a", "great", "film", "[SEP]"] and maps.shape[-2:] == (len(tokens), len(tokens))


@pytest.mark.slow
def test_a_cross_regression_run_keeps_its_onnx_model_and_exports_raw_strings(reading_runs, tmp_path):
    run_dir = reading_runs("cross")
    run = read_run(run_dir)
    assert run.data.problem_type == REGRESSION
    assert run.serving["runtime"] == "onnxruntime"  # model.onnx reproduced the model on validation
    served_onnx = predict.load(run_dir, run).predict_values(*PAIRS)
    served_keras = predict.load(run_dir, run, runtime="tensorflow").predict_values(*PAIRS)
    np.testing.assert_allclose(served_onnx, served_keras, atol=1e-5)
    assert main(["export", str(run_dir), "--output-dir", str(tmp_path / "export")]) == 0
    inputs = {"text": PAIRS[0], "text_pair": PAIRS[1]}
    served = served_in_a_fresh_process(tmp_path / "export", inputs, "values", tmp_path)
    np.testing.assert_allclose(served, served_keras, atol=1e-4)


def test_a_reading_for_single_texts_is_refused_before_any_run_directory(tmp_path, capsys):
    train_file = write_kind_file(tmp_path / "train.csv", SINGLE_LABEL, pairs=False, n=40)
    argv = tiny_argv(tmp_path / "run", train_file, pair_reading="siamese")
    assert refuse(argv, capsys) == (
        "error: --pair-reading siamese says how to read the two texts of a pair task, and this task has single "
        "texts; drop --pair-reading, or give the second texts' column with --text-pair-column."
    )
    assert not (tmp_path / "run").exists()


def test_an_unknown_reading_is_refused_with_the_choices(tmp_path, capsys):
    argv = tiny_argv(tmp_path / "run", tmp_path / "train.csv", pair_reading="both")
    assert "--pair-reading: invalid choice: 'both' (choose from" in refuse(argv, capsys)
