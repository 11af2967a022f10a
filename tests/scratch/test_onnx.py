"""The from-scratch run's `model.onnx` and Python tokenizer: checked at the end of training, served by default."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from core.classifier import load
from core.onnx import MAX_DIFFERENCE
from core.record import read_run
from core.rundir import RunError
from scratch.onnx import PythonWordPiece, PythonWords
from scratch.predict import load as load_side
from scratch.tokenizer import WordTokenizer, make_tokenizer
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
# What tensorflow-text's BERT tokenizer does that a plain lowercase-and-split would not: NFKC and full case folding
# (ß, ligatures, full-width letters, İ), default-ignorable characters dropped inside a word, other control and format
# characters as spaces, only ASCII white space splitting (U+1680 and U+2028 stay in their word), Unicode punctuation
# and CJK ideographs as words, combining marks stripped, and a word over 100 UTF-8 bytes as one unknown piece.
UNICODE = [
    "".join(f"{space}x" for space in "\t\n\v\f\r\x1c\x1f \x85\xa0\u1680\u2003\u2028\u2029\u202f\u3000"),
    "Ǆemal ŉ ß ẞ İstanbul ﬁne ﬃ ΐ ς Σ ⅷ ① ｆｕｌｌ ㌔",
    "x\x00y\x7fz\ufffd \ufeffhello\u200d wo\u00adrd",
    "日本語のテキスト 한국어 «quoted» — “smart” ¿qué? 😀👍🏽",
    "a\u0300\u0301b \u0301 Café crème, naïve résumé",
    "[CLS] [UNK] ##ing Un-be-LIEVABLY",
    "ж" * 50 + " " + "ж" * 51 + " " + "a" * 100 + " " + "a" * 101,
]


def test_the_python_wordpiece_tokenizer_gives_the_layer_s_ids() -> None:
    tokenizer = make_tokenizer("wordpiece", [], vocab_size=3, max_length=200)
    texts = AWKWARD + UNICODE
    expected = tokenizer(tf.constant(texts)).numpy()
    ids = PythonWordPiece(tokenizer)(texts)
    assert ids.dtype == np.int64 and ids.shape == expected.shape
    np.testing.assert_array_equal(ids, expected)
    for text in texts:  # alone, without a batch's padding
        np.testing.assert_array_equal(PythonWordPiece(tokenizer)([text]), tokenizer(tf.constant([text])).numpy())


def test_the_python_word_tokenizer_gives_the_layer_s_ids() -> None:
    tokenizer = WordTokenizer.adapt(AWKWARD * 2 + ["école the film", "ÉCOLE"], vocab_size=40, max_length=16)
    expected = tokenizer(tf.constant(AWKWARD)).numpy()
    ids = PythonWords(tokenizer)(AWKWARD)
    assert ids.dtype == np.int64 and ids.shape == expected.shape == (len(AWKWARD), 16)
    np.testing.assert_array_equal(ids, expected)
    one = PythonWords(tokenizer)([""])
    np.testing.assert_array_equal(one, [[tokenizer.unknown_id]])  # an empty text is one unknown token


def test_a_finished_run_is_served_through_its_checked_onnx_model(tiny_run: Path) -> None:
    run = read_run(tiny_run)
    serving = run.serving
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


@pytest.mark.slow
def test_a_wordpiece_run_is_served_through_onnx_with_the_python_tokenizer(tmp_path: Path) -> None:
    run_dir = train_tiny_run(tmp_path / "run", tmp_path / "train.csv", tokenizer="wordpiece", epochs=1, max_steps=10)
    assert read_run(run_dir).serving["runtime"] == "onnxruntime"
    served = load(run_dir)
    assert isinstance(served._forward.token_ids, PythonWordPiece)
    texts = [*POSITIVE, *NEGATIVE, *AWKWARD, *UNICODE]
    expected = load_side(run_dir, read_run(run_dir), runtime="tensorflow").predict_proba(texts)
    np.testing.assert_allclose(served.predict_proba(texts), expected, atol=1e-5)


@pytest.mark.slow
def test_a_run_trained_with_no_onnx_is_served_through_tensorflow(tmp_path: Path) -> None:
    run_dir = train_tiny_run(tmp_path / "run", tmp_path / "train.csv", no_onnx=True, epochs=1, max_steps=2)
    assert not (run_dir / "model.onnx").exists()
    assert read_run(run_dir).serving == {"runtime": "tensorflow", "note": "trained with --no-onnx"}
    assert load(run_dir).runtime == "tensorflow"


def test_a_run_whose_onnx_file_is_gone_names_it(tiny_run: Path, tmp_path: Path) -> None:
    copy = tmp_path / "run"
    shutil.copytree(tiny_run, copy)
    (copy / "model.onnx").unlink()
    with pytest.raises(RunError, match=r"has no model.onnx, which its run.json serves it through"):
        load(copy)


@pytest.mark.parametrize("kind", ["words", "wordpiece"])
def test_the_python_tokenizers_join_pairs_as_the_layers_do(kind: str) -> None:
    tokenizer = make_tokenizer(kind, AWKWARD * 2 + ["école the film"], vocab_size=40, max_length=12, pairs=True)
    texts = AWKWARD + UNICODE
    pairs = texts[::-1]
    expected = tokenizer(tf.constant(texts), tf.constant(pairs)).numpy()
    ids = (PythonWords if kind == "words" else PythonWordPiece)(tokenizer)(texts, pairs)
    assert ids.dtype == np.int64 and ids.shape == expected.shape
    np.testing.assert_array_equal(ids, expected)
