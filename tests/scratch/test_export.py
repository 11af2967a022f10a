"""`python -m scratch export`: the SavedModel serves raw strings with no project code; no int8 variant, said why."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from core.args import DataArguments
from core.classifier import load
from core.data import load_task
from core.rundir import read_run_json
from scratch.__main__ import main
from tests.conftest import NEGATIVE, POSITIVE

TEXTS = [*POSITIVE, *NEGATIVE, "a great film and a dull mess", "", "Wonderful, MOVING! 😀", "word " * 100]

FRESH_PROCESS = textwrap.dedent(
    """
    import json, sys
    import tensorflow as tf
    import tensorflow_text

    export_dir, texts = sys.argv[1], json.loads(sys.argv[2])
    assert not any(name.split(".")[0] in ("core", "finetune", "scratch") for name in sys.modules)
    serve = tf.saved_model.load(export_dir + "/saved_model").signatures["serving_default"]
    print(json.dumps(serve(text=tf.constant(texts))["probabilities"].numpy().tolist()))
    """
)


@pytest.fixture(scope="module")
def exported(tiny_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    output = tmp_path_factory.mktemp("scratch-export") / "export"
    assert main(["export", str(tiny_run), "--output-dir", str(output)]) == 0
    return output


def test_the_export_serves_the_classifier_s_probabilities_in_a_fresh_process(
    exported: Path, tiny_run: Path, tmp_path: Path
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", FRESH_PROCESS, str(exported), json.dumps(TEXTS)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    served = np.array(json.loads(done.stdout.strip().splitlines()[-1]))
    np.testing.assert_allclose(served, load(tiny_run).predict_proba(TEXTS), atol=1e-5)


def test_export_json_records_the_float_accuracy_and_why_there_is_no_int8(exported: Path, tiny_run: Path) -> None:
    run = read_run_json(tiny_run)
    record = json.loads((exported / "export.json").read_text())
    assert (exported / "labels.txt").read_text().splitlines() == run["data"]["labels"]
    assert record["int8"] is None and "TFLite" in record["int8_note"]
    assert not (exported / "model_int8.tflite").exists()
    task = load_task(DataArguments(**run["data"]["options"]))
    predicted = load(tiny_run).predict_proba(task.texts("test")).argmax(axis=1)
    assert record["test"]["float_accuracy"] == pytest.approx(np.mean(predicted == task.label_ids("test")))


def test_a_finetune_run_is_sent_to_its_own_side(tiny_run: Path, tmp_path: Path, capsys) -> None:
    record = read_run_json(tiny_run)
    other = tmp_path / "other"
    other.mkdir()
    (other / "run.json").write_text(json.dumps({**record, "side": "finetune"}))
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
