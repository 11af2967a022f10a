"""`python -m scratch export`: the SavedModel serves raw strings (a pair task's two) with no project code, for every
kind; no int8 variant, said why."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.metrics import f1_score

from core.args import DataArguments
from core.classifier import load
from core.data import load_task
from core.record import read_run
from core.tasks import MULTI_LABEL, REGRESSION, SINGLE_LABEL
from scratch.__main__ import main
from tests.conftest import NEGATIVE, POSITIVE

TEXTS = [*POSITIVE, *NEGATIVE, "a great film and a dull mess", "", "Wonderful, MOVING! 😀", "word " * 100]

FRESH_PROCESS = textwrap.dedent(
    """
    import json, sys
    import tensorflow as tf
    import tensorflow_text

    export_dir, inputs, output = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
    assert not any(name.split(".")[0] in ("core", "finetune", "scratch") for name in sys.modules)
    serve = tf.saved_model.load(export_dir + "/saved_model").signatures["serving_default"]
    print(json.dumps(serve(**{name: tf.constant(texts) for name, texts in inputs.items()})[output].numpy().tolist()))
    """
)


def served_in_a_fresh_process(export_dir: Path, inputs: dict[str, list[str]], output: str, cwd: Path) -> np.ndarray:
    """The export's `serving_default` outputs, from a Python process that imports TensorFlow alone."""
    done = subprocess.run(
        [sys.executable, "-c", FRESH_PROCESS, str(export_dir), json.dumps(inputs), output],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return np.array(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.fixture(scope="module")
def exported(tiny_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    output = tmp_path_factory.mktemp("scratch-export") / "export"
    assert main(["export", str(tiny_run), "--output-dir", str(output)]) == 0
    return output


@pytest.mark.slow
def test_the_export_serves_the_classifier_s_probabilities_in_a_fresh_process(
    exported: Path, tiny_run: Path, tmp_path: Path
) -> None:
    served = served_in_a_fresh_process(exported, {"text": TEXTS}, "probabilities", tmp_path)
    np.testing.assert_allclose(served, load(tiny_run).predict_proba(TEXTS), atol=1e-5)


def test_export_json_records_the_float_accuracy_and_why_there_is_no_int8(exported: Path, tiny_run: Path) -> None:
    run = read_run(tiny_run)
    record = json.loads((exported / "export.json").read_text())
    assert (exported / "labels.txt").read_text().splitlines() == run.data.labels
    assert record["int8"] is None and "TFLite" in record["int8_note"]
    assert not (exported / "model_int8.tflite").exists()
    task = load_task(DataArguments(**run.data.options))
    predicted = load(tiny_run).predict_proba(task.texts("test")).argmax(axis=1)
    assert record["test"]["float_accuracy"] == pytest.approx(np.mean(predicted == task.label_ids("test")))


def test_a_finetune_run_is_sent_to_its_own_side(tiny_run: Path, tmp_path: Path, capsys) -> None:
    record = read_run(tiny_run)
    other = tmp_path / "other"
    other.mkdir()
    (other / "run.json").write_text(json.dumps({**record.to_json(), "side": "finetune"}))
    with pytest.raises(SystemExit):
        main(["export", str(other), "--output-dir", str(tmp_path / "out")])
    assert "export it with python -m finetune export" in capsys.readouterr().err


def test_a_translation_run_is_refused_with_where_its_export_is(tmp_path: Path, capsys) -> None:
    run = tmp_path / "translation"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"schema_version": 1, "task_kind": "translation", "side": "scratch"}))
    with pytest.raises(SystemExit):
        main(["export", str(run), "--output-dir", str(tmp_path / "out")])
    assert "is a translation run; its saved_model/ is already its serving export" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("problem_type", [SINGLE_LABEL, MULTI_LABEL, REGRESSION])
def test_a_pair_task_s_export_gives_the_run_s_outputs_in_a_fresh_process(kind_run, problem_type, tmp_path) -> None:
    run_dir = kind_run(problem_type, True)
    output = tmp_path / "export"
    assert main(["export", str(run_dir), "--output-dir", str(output)]) == 0
    texts, pairs = TEXTS, TEXTS[::-1]
    name = "values" if problem_type == REGRESSION else "probabilities"
    served = served_in_a_fresh_process(output, {"text": texts, "text_pair": pairs}, name, tmp_path)
    model = load(run_dir)
    record = json.loads((output / "export.json").read_text())
    assert (record["problem_type"], record["inputs"], record["output"]) == (problem_type, ["text", "text_pair"], name)
    assert record["thresholds"] == model.thresholds
    test = load_task(DataArguments(**model.record.data.options))
    inputs, gold = (test.texts("test"), test.text_pairs("test")), test.targets("test")
    expected = {  # the test split's headline, from the run's own outputs
        SINGLE_LABEL: lambda: np.mean(model.kind.decide(model.predict_proba(*inputs), model.thresholds) == gold),
        MULTI_LABEL: lambda: f1_score(
            gold, model.kind.decide(model.predict_proba(*inputs), model.thresholds), average="macro", zero_division=0
        ),
        REGRESSION: lambda: spearmanr(gold, model.predict_values(*inputs)).statistic,
    }[problem_type]()
    headline = {SINGLE_LABEL: "accuracy", MULTI_LABEL: "macro_f1", REGRESSION: "spearman"}[problem_type]
    assert record["test"][f"float_{headline}"] == pytest.approx(expected, abs=1e-6)
    if problem_type == REGRESSION:
        np.testing.assert_allclose(served, model.predict_values(texts, pairs), atol=1e-4)
        assert not (output / "labels.txt").exists()
        return
    probabilities = model.predict_proba(texts, pairs)
    np.testing.assert_allclose(served, probabilities, atol=1e-4)
    np.testing.assert_array_equal(
        model.kind.decide(served, model.thresholds), model.kind.decide(probabilities, model.thresholds)
    )  # the same labels
    assert (output / "labels.txt").read_text().splitlines() == model.labels
