"""The from-scratch run's `model.onnx` and Python tokenizer: checked at the end of training, served by default."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from core.classifier import load
from core.onnx import MAX_DIFFERENCE
from core.rundir import RunError, read_run_json
from scratch.onnx import PythonWords
from scratch.predict import load as load_side
from scratch.tokenizer import WordTokenizer
from tests.conftest import NEGATIVE, POSITIVE
from tests.scratch.tiny import train_tiny_run

AWKWARD = [
    "The FILM, wasn't bad!",
    "ÉCOLE École école ÄÖÜ",  # tf.strings.lower lowers ASCII letters only
    "a\u00a0b\u2003c\x1cd x\u200by",  # only ASCII whitespace separates words
    "tab\there\nnewline  spaces",
    "$100 & 50% off #1 @user ^_^ ~`|\\ (really?) don't-stop/now",
    "emoji 😀👍🏽 test 🎬 中文字符",
    "",
    "   ...   ",
    "the " * 40,  # cut to max_length
]


def test_the_python_word_tokenizer_gives_the_layer_s_ids() -> None:
    tokenizer = WordTokenizer.adapt(AWKWARD * 2 + ["école the film", "ÉCOLE"], vocab_size=40, max_length=16)
    expected = tokenizer(tf.constant(AWKWARD)).numpy()
    ids = PythonWords(tokenizer)(AWKWARD)
    assert ids.dtype == np.int64 and ids.shape == expected.shape == (len(AWKWARD), 16)
    np.testing.assert_array_equal(ids, expected)
    one = PythonWords(tokenizer)([""])
    np.testing.assert_array_equal(one, [[tokenizer.unknown_id]])  # an empty text is one unknown token


def test_a_finished_run_is_served_through_its_checked_onnx_model(tiny_run: Path) -> None:
    run = read_run_json(tiny_run)
    serving = run["serving"]
    assert serving["runtime"] == "onnxruntime" and (tiny_run / serving["file"]).is_file()
    assert serving["label_agreement"] == 1.0 and 0 <= serving["max_abs_difference"] <= MAX_DIFFERENCE

    texts = [*POSITIVE, *NEGATIVE, "", "not", *AWKWARD]
    served = load(tiny_run)
    tensorflow = load_side(tiny_run, run, runtime="tensorflow")
    assert (served.runtime, tensorflow.runtime) == ("onnxruntime", "tensorflow")
    expected = tensorflow.predict_proba(texts)
    np.testing.assert_allclose(served.predict_proba(texts), expected, atol=1e-5)
    alone = np.concatenate([served.predict_proba([text]) for text in texts])  # no padding
    np.testing.assert_allclose(alone, expected, atol=1e-5)
    tokens, maps = served.explain("a great film")  # attention maps still come from the Keras model
    assert maps.shape[-1] == len(tokens)


def test_a_run_trained_with_no_onnx_is_served_through_tensorflow(tmp_path: Path) -> None:
    run_dir = train_tiny_run(tmp_path / "run", tmp_path / "train.csv", no_onnx=True, epochs=1)
    assert not (run_dir / "model.onnx").exists()
    assert read_run_json(run_dir)["serving"] == {"runtime": "tensorflow", "note": "trained with --no-onnx"}
    assert load(run_dir).runtime == "tensorflow"


def test_a_run_whose_onnx_file_is_gone_names_it(tiny_run: Path, tmp_path: Path) -> None:
    copy = tmp_path / "run"
    shutil.copytree(tiny_run, copy)
    (copy / "model.onnx").unlink()
    with pytest.raises(RunError, match=r"has no model.onnx, which its run.json serves it through"):
        load(copy)
