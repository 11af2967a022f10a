"""`python -m finetune export`: the SavedModel and int8 TFLite files serve raw strings with no project code, and the
run's calibration reaches every export: the SavedModel, the int8 TFLite and both ONNX files give the calibrated
probabilities of `predict_proba`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from core.args import DataArguments
from core.classifier import load
from core.data import load_task
from core.record import read_run
from core.rundir import RUN_JSON
from finetune.__main__ import main
from tests.conftest import NEGATIVE, POSITIVE

TEXTS = [*POSITIVE, *NEGATIVE, "a great film and a dull mess", "", "Wonderful, MOVING!"]
AWKWARD = [
    "Café déjà vu — naïve résumé!",
    "It's GREAT!!! :) ... (really?) don't-stop/now",
    "emoji 😀👍🏽 test 🎬",
    "tab\there\nnewline  spaces\u00a0nbsp",
    "Ǆ İstanbul ΣΊΣΥΦΟΣ Ωmega ÅNGSTRÖM Łódź",
    "control\u0000\u200bchar\ufffd",
    "中文字符 mixed with 日本語",
    "e\u0301 combining accent",
    "",
    "   ",
    "x" * 150,
    "$100 & 50% off #1 @user ^_^ ~`|\\",
    "a long review " + "that keeps on going, " * 60,
]

# Runs in a fresh interpreter from an empty folder: only TensorFlow and tensorflow-text, no project code.
FRESH_PROCESS = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import tensorflow as tf
    import tensorflow_text
    from tensorflow.lite.python.interpreter import InterpreterWithCustomOps

    export_dir, texts = sys.argv[1], json.loads(sys.argv[2])
    assert not any(name.split(".")[0] in ("core", "finetune", "scratch") for name in sys.modules)
    model = tf.saved_model.load(export_dir + "/saved_model")
    floats = model.signatures["serving_default"](text=tf.constant(texts))["probabilities"].numpy()
    interpreter = InterpreterWithCustomOps(
        model_path=export_dir + "/model_int8.tflite",
        custom_op_registerers=tensorflow_text.tflite_registrar.SELECT_TFTEXT_OPS,
    )
    runner = interpreter.get_signature_runner("serving_default")
    int8 = runner(text=np.array(texts, dtype=object))["probabilities"]
    print(json.dumps({"float": floats.tolist(), "int8": int8.tolist()}))
    """
)


# The ONNX files need only onnxruntime and tokenizers: not TensorFlow, not transformers.
FRESH_ONNX_PROCESS = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import onnxruntime
    from tokenizers import Tokenizer

    export_dir, texts = sys.argv[1], json.loads(sys.argv[2])
    record = json.load(open(export_dir + "/export.json"))
    tokenizer = Tokenizer.from_file(export_dir + "/" + record["onnx"]["tokenizer"])
    window, pad = record["max_length"], record["onnx"]["pad_id"]
    # docs/formats.md: a longer text keeps [CLS], its first pieces (a quarter of the window under head-tail) and
    # its last ones up to the window, and [SEP]
    head = window - 2 if record.get("long_text", "head") == "head" else window // 4
    rows = [e.ids for e in tokenizer.encode_batch(texts)]
    rows = [r if len(r) <= window else r[: 1 + head] + r[len(r) - 1 - (window - 2 - head) :] for r in rows]
    width = max(map(len, rows))
    feed = {
        "input_ids": np.array([r + [pad] * (width - len(r)) for r in rows], np.int32),
        "attention_mask": np.array([[1] * len(r) + [0] * (width - len(r)) for r in rows], np.int32),
    }
    result = {}
    for variant in ("float", "int8"):
        session = onnxruntime.InferenceSession(export_dir + "/" + record["onnx"][variant]["path"])
        result[variant] = session.run(None, feed)[0].tolist()
    assert not any(name.split(".")[0] in ("tensorflow", "transformers", "core", "finetune") for name in sys.modules)
    print(json.dumps(result))
    """
)


@pytest.fixture(scope="module")
def calibrated_run(base_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's tiny run with a sharper calibration than the one it fitted (temperature 0.2), so that the
    calibrated probabilities visibly differ from the model's own: the exports must give the calibrated ones."""
    run = Path(shutil.copytree(base_run, tmp_path_factory.mktemp("finetune-calibrated") / "run"))
    body = json.loads((run / RUN_JSON).read_text())
    assert body["calibration"]["method"] == "temperature"
    body["calibration"]["temperatures"] = [0.2]
    (run / RUN_JSON).write_text(json.dumps(body))
    return run


@pytest.fixture(scope="module")
def exported(calibrated_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    output = tmp_path_factory.mktemp("finetune-export") / "export"
    assert main(["export", str(calibrated_run), "--output-dir", str(output)]) == 0
    return output


def fresh_process_probabilities(
    export_dir: Path, texts: list[str], cwd: Path, script: str = FRESH_PROCESS
) -> dict[str, np.ndarray]:
    done = subprocess.run(
        [sys.executable, "-c", script, str(export_dir), json.dumps(texts)],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return {name: np.array(values) for name, values in result.items()}


@pytest.mark.slow  # the module's export of the tiny run
def test_the_export_records_the_run_s_calibration(exported: Path, calibrated_run: Path) -> None:
    model = load(calibrated_run)
    assert model.temperatures == [0.2]
    assert np.abs(model.predict_proba(TEXTS) - model.outputs(TEXTS)).max() > 0.01  # calibration changes them
    assert json.loads((exported / "export.json").read_text())["calibration"]["temperatures"] == [0.2]


@pytest.mark.slow
def test_the_export_serves_the_classifier_s_probabilities_in_a_fresh_process(
    exported: Path, calibrated_run: Path, tmp_path: Path
) -> None:
    """The calibrated probabilities of `predict_proba` (`calibrated_run`)."""
    options = read_run(calibrated_run).data.options
    texts = TEXTS + load_task(DataArguments(**options)).texts("test")  # the run's whole test split among them
    expected = load(calibrated_run).predict_proba(texts)
    served = fresh_process_probabilities(exported, texts, tmp_path)
    np.testing.assert_allclose(served["float"], expected, atol=1e-5)
    assert served["int8"].shape == expected.shape
    np.testing.assert_array_equal(served["int8"].argmax(axis=1), expected.argmax(axis=1))


@pytest.mark.slow  # the module's export of the tiny run
def test_the_exports_cut_long_texts_as_the_run_reads_them(exported: Path, calibrated_run: Path, tmp_path: Path) -> None:
    """Texts longer than the window, cut as the run cuts them (its head and tail): the SavedModel in its graph, the
    ONNX models through `core.export.load_onnx` and through the recipe docs/formats.md gives for `tokenizer.json`."""
    from core.export import load_onnx

    assert read_run(calibrated_run).data.options["long_text"] == "head-tail"
    assert json.loads((exported / "export.json").read_text())["long_text"] == "head-tail"
    texts = [AWKWARD[-1], "great " * 40 + "dull mess " * 10, "dull " * 40 + "a wonderful moving film " * 5]
    expected = load(calibrated_run).predict_proba(texts)
    np.testing.assert_allclose(load_onnx(exported, "float")(texts), expected, atol=1e-5)
    for script in (FRESH_PROCESS, FRESH_ONNX_PROCESS):
        np.testing.assert_allclose(
            fresh_process_probabilities(exported, texts, tmp_path, script)["float"], expected, atol=1e-5
        )


@pytest.mark.slow  # the module's export of the tiny run
def test_the_onnx_files_serve_the_classifier_s_probabilities_with_neither_tensorflow_nor_transformers(
    exported: Path, calibrated_run: Path, tmp_path: Path
) -> None:
    """The calibrated probabilities of `predict_proba` (`calibrated_run`)."""
    classifier = load(calibrated_run)
    assert classifier.runtime == "onnxruntime"
    options = read_run(calibrated_run).data.options
    texts = TEXTS + load_task(DataArguments(**options)).texts("test")  # the run's whole test split among them
    expected = classifier.predict_proba(texts)
    served = fresh_process_probabilities(exported, texts, tmp_path, FRESH_ONNX_PROCESS)
    np.testing.assert_allclose(served["float"], expected, atol=1e-5)
    assert served["int8"].shape == expected.shape
    np.testing.assert_allclose(served["int8"].sum(axis=1), 1.0, atol=1e-5)
    assert set(expected.argmax(axis=1)) == {0, 1}  # both labels among the texts, so agreeing is not one constant
    np.testing.assert_array_equal(served["int8"].argmax(axis=1), expected.argmax(axis=1))
    record = json.loads((exported / "export.json").read_text())
    assert record["onnx"]["int8"]["bytes"] == (exported / "model_int8.onnx").stat().st_size
    import onnx

    ops = {node.op_type for node in onnx.load(str(exported / "model_int8.onnx")).graph.node}
    assert {"DynamicQuantizeLinear", "MatMulInteger"} <= ops  # int8 weights, activations quantized per call
    assert "MatMulInteger" not in {node.op_type for node in onnx.load(str(exported / "model.onnx")).graph.node}
    test = record["test"]
    assert test["onnx_float_accuracy"] == pytest.approx(test["float_accuracy"])
    assert test["onnx_int8_accuracy_change"] == pytest.approx(test["onnx_int8_accuracy"] - test["float_accuracy"])


def test_the_onnx_tokenizer_file_gives_a_head_run_s_ids_on_awkward_text(tmp_path: Path) -> None:
    from tokenizers import Tokenizer
    from transformers import AutoTokenizer

    from core.long_text import HEAD, Reading
    from core.pretrained import packaged_minilm
    from finetune.pipeline import encode, pad

    tokenizer = AutoTokenizer.from_pretrained(packaged_minilm())
    max_length = 32
    expected_ids, expected_mask = pad(
        encode(tokenizer, AWKWARD, max_length, reading=Reading(HEAD)).ids, tokenizer.pad_token_id
    )
    tokenizer.backend_tokenizer.save(str(tmp_path / "tokenizer.json"))
    standalone = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    standalone.enable_truncation(max_length)
    standalone.enable_padding(pad_id=tokenizer.pad_token_id)
    encodings = standalone.encode_batch(AWKWARD)
    np.testing.assert_array_equal(np.array([e.ids for e in encodings]), expected_ids)
    np.testing.assert_array_equal(np.array([e.attention_mask for e in encodings]), expected_mask)


@pytest.mark.slow  # the module's export of the tiny run
def test_export_json_records_both_variants_accuracy_on_the_test_split(exported: Path, calibrated_run: Path) -> None:
    run = read_run(calibrated_run)
    record = json.loads((exported / "export.json").read_text())
    assert (exported / "labels.txt").read_text().splitlines() == run.data.labels == record["labels"]
    assert record["side"] == "finetune" and record["max_length"] == 16
    assert record["float"]["path"] == "saved_model" and record["int8"]["path"] == "model_int8.tflite"
    assert record["int8"]["bytes"] == (exported / "model_int8.tflite").stat().st_size
    assert not (exported.parent / "export.partial").exists()

    task = load_task(DataArguments(**run.data.options))
    predicted = load(calibrated_run).predict_proba(task.texts("test")).argmax(axis=1)
    test = record["test"]
    assert test["n"] == len(task.texts("test"))
    assert test["float_accuracy"] == pytest.approx(np.mean(predicted == task.label_ids("test")))
    assert test["int8_accuracy_change"] == pytest.approx(test["int8_accuracy"] - test["float_accuracy"])
    assert 0 <= test["int8_agreement"] <= 1


@pytest.mark.parametrize("long_text", ["head", "head-tail"])
def test_the_graph_tokenizer_gives_the_run_s_ids_on_awkward_text(long_text: str) -> None:
    from transformers import AutoTokenizer

    from core.long_text import Reading
    from core.pretrained import packaged_minilm
    from finetune.export import WordPieceIds
    from finetune.pipeline import encode, pad

    tokenizer = AutoTokenizer.from_pretrained(packaged_minilm())
    max_length = 32
    encoded = encode(tokenizer, AWKWARD, max_length, reading=Reading(long_text))
    expected_ids, expected_mask = pad(encoded.ids, tokenizer.pad_token_id)
    assert encoded.truncated  # the long review is cut, so the two readings differ
    graph = WordPieceIds(tokenizer, max_length, long_text)
    ids, mask = graph(np.array(AWKWARD, dtype=object))
    np.testing.assert_array_equal(ids.numpy(), expected_ids)
    np.testing.assert_array_equal(mask.numpy(), expected_mask)
    assert expected_ids.shape[1] == max_length  # the long review was cut, keeping [SEP]

    # The TFLite tokenizer agrees wherever the text holds no compatibility characters.
    plain = [text for text in AWKWARD if "Ǆ" not in text and "\u0000" not in text]
    lite_ids, _ = graph.lite(np.array(plain, dtype=object))
    plain_ids, _ = graph(np.array(plain, dtype=object))
    np.testing.assert_array_equal(lite_ids.numpy(), plain_ids.numpy())


def test_an_existing_output_directory_is_refused_before_the_model_loads(base_run: Path, tmp_path: Path, capsys):
    (tmp_path / "taken").mkdir()
    with pytest.raises(SystemExit) as stop:
        main(["export", str(base_run), "--output-dir", str(tmp_path / "taken")])
    assert stop.value.code == 2
    assert capsys.readouterr().err.strip() == (
        f"error: {tmp_path / 'taken'} already exists. Pass --overwrite to replace it, or choose another --output-dir."
    )


def refuse(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    return capsys.readouterr().err.strip().splitlines()[-1]


def test_an_output_directory_that_holds_the_run_is_refused_even_with_overwrite(base_run: Path, tmp_path: Path, capsys):
    run = Path(shutil.copytree(base_run, tmp_path / "runs" / "run"))
    files = sorted(p.name for p in run.iterdir())
    for target in (run, run.parent, tmp_path):
        assert refuse(["export", str(run), "--output-dir", str(target), "--overwrite"], capsys) == (
            f"error: --output-dir {target} holds the run {run}; choose a directory outside it."
        )
    assert sorted(p.name for p in run.iterdir()) == files


def test_a_symlink_or_an_unfinished_training_run_is_not_an_output_directory(base_run: Path, tmp_path: Path, capsys):
    (tmp_path / "earlier").mkdir()
    (tmp_path / "earlier" / "export.json").write_text("{}")
    (tmp_path / "link").symlink_to(tmp_path / "earlier")
    assert refuse(["export", str(base_run), "--output-dir", str(tmp_path / "link"), "--overwrite"], capsys) == (
        f"error: --output-dir {tmp_path / 'link'} is a symbolic link; give the directory it points to."
    )
    (tmp_path / "training.partial").mkdir()
    (tmp_path / "training.partial" / "resume.json").write_text("{}")
    assert refuse(["export", str(base_run), "--output-dir", str(tmp_path / "training")], capsys) == (
        f"error: {tmp_path / 'training.partial'} is an unfinished training run; choose another --output-dir."
    )
    assert (tmp_path / "training.partial" / "resume.json").is_file() and (
        tmp_path / "earlier" / "export.json"
    ).is_file()


def test_overwrite_replaces_only_an_earlier_export(base_run: Path, tmp_path: Path, capsys):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "keep.txt").write_text("mine")
    (tmp_path / "file").write_text("mine")
    for target in (notes, tmp_path / "file"):
        assert refuse(["export", str(base_run), "--output-dir", str(target), "--overwrite"], capsys) == (
            f"error: {target} is not an export (it has no export.json): --overwrite replaces only an earlier export "
            "or an empty directory. Choose another --output-dir."
        )
    assert (notes / "keep.txt").read_text() == (tmp_path / "file").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "notes"]


def test_a_missing_unfinished_or_weightless_run_is_refused(base_run: Path, tmp_path: Path, capsys):
    out = ["--output-dir", str(tmp_path / "out")]
    assert refuse(["export", str(tmp_path / "nowhere"), *out], capsys) == (
        f"error: Run directory {tmp_path / 'nowhere'} does not exist."
    )
    (tmp_path / "half.partial").mkdir()
    assert refuse(["export", str(tmp_path / "half"), *out], capsys) == (
        f"error: Run directory {tmp_path / 'half'} does not exist. An unfinished run is in "
        f"{tmp_path / 'half.partial'}; rerun its command with --resume."
    )
    run = Path(shutil.copytree(base_run, tmp_path / "run"))
    (run / "tf_model.h5").unlink()
    assert refuse(["export", str(run), *out], capsys) == (
        f"error: {run} has no tf_model.h5; the run is incomplete, train it again with python -m finetune."
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["half.partial", "run"]


@pytest.mark.slow
def test_a_failed_export_leaves_nothing_behind(base_run: Path, tmp_path: Path, capsys, monkeypatch):
    run = Path(shutil.copytree(base_run, tmp_path / "run"))
    record = json.loads((run / "run.json").read_text())
    record["data"]["options"]["train_file"] = str(tmp_path / "moved.csv")
    (run / "run.json").write_text(json.dumps(record))
    error = refuse(["export", str(run), "--output-dir", str(tmp_path / "out")], capsys)
    assert str(tmp_path / "moved.csv") in error and error.endswith("pass --no-evaluate to skip it.")

    import core.export

    def broken(module):
        raise RuntimeError("the converter failed")

    monkeypatch.setattr(core.export, "convert_int8", broken)
    with pytest.raises(RuntimeError, match="the converter failed"):
        main(["export", str(base_run), "--output-dir", str(tmp_path / "out")])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


@pytest.mark.slow  # the module's export of the tiny run
def test_the_serving_benchmark_times_every_path_of_the_export(exported: Path, calibrated_run: Path) -> None:
    from compare.bench.serving import measure

    result = measure(calibrated_run, exported, TEXTS, samples=3)
    record = json.loads((exported / "export.json").read_text())
    assert result["side"] == "finetune" and result["texts"] == len(TEXTS) and result["samples"] == 3
    for path in ("current", "float", "int8", "onnx_int8"):
        timed = result[path]
        assert 0 < timed["p50_ms"] <= timed["p95_ms"] and timed["batch_per_s"] > 0
    assert result["int8_vs_current_p50"] == pytest.approx(result["int8"]["p50_ms"] / result["current"]["p50_ms"])
    assert result["int8_accuracy_change"] == record["test"]["int8_accuracy_change"]
    assert result["onnx_int8_accuracy"] == record["test"]["onnx_int8_accuracy"]
