"""`--pooling mean`: the mean-pooled BERT subclass trains, saves, reloads through the Auto classes, ignores padding."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from core.classifier import load
from core.record import read_run
from finetune.args import FinetuneArguments
from tests.conftest import NEGATIVE, POSITIVE
from tests.finetune.tiny import train_tiny_run


@pytest.fixture(scope="session")
def mean_run(runs_dir: Path, train_file: Path) -> Path:
    return train_tiny_run(runs_dir / "mean", train_file, pooling="mean", epochs=1)


@pytest.mark.slow
def test_the_run_records_mean_pooling_and_saves_no_pooler(mean_run: Path) -> None:
    run = read_run(mean_run)
    assert run.hyperparameters["pooling"] == "mean"
    assert run.model.architecture == "TFBertMeanPooledForSequenceClassification"
    config = json.loads((mean_run / "config.json").read_text())
    assert config["model_type"] == "textcls-bert-mean"
    classifier = load(mean_run)
    assert not any("pooler" in w.name for w in classifier.model.weights)
    assert run.model.params == classifier.model.count_params()
    assert run.serving["runtime"] == "onnxruntime"  # the converter's process loads the registered type too


@pytest.mark.slow  # a mean-pooled tiny run
def test_reloaded_probabilities_are_the_mean_of_the_real_tokens_through_the_head(mean_run: Path) -> None:
    """Recomputed independently: plain TFBertModel hidden states, a numpy masked mean, the saved head."""
    import tensorflow as tf
    from transformers import AutoTokenizer, TFBertModel

    texts = [*POSITIVE, *NEGATIVE, "a great film and a dull mess"]
    classifier = load(mean_run)
    probs = classifier.predict_proba(texts)

    tokenizer = AutoTokenizer.from_pretrained(mean_run)
    encoder = TFBertModel.from_pretrained(mean_run, add_pooling_layer=False)
    batch = tokenizer(texts, padding="max_length", max_length=16, truncation=True, return_tensors="np")
    hidden = encoder(**batch, training=False).last_hidden_state.numpy()  # (B, T, H)
    mask = batch["attention_mask"][:, :, None]
    pooled = (hidden * mask).sum(axis=1) / mask.sum(axis=1)  # (B, H)
    head = classifier.model.classifier
    logits = pooled @ head.kernel.numpy() + head.bias.numpy()
    (temperature,) = classifier.temperatures  # the run's calibration, fitted after training
    np.testing.assert_allclose(probs, tf.nn.softmax(logits / temperature).numpy(), atol=1e-5)

    predicted = np.array([classifier.labels[k] for k in classifier.predict(texts)])  # class ids, named
    assert (predicted[: len(POSITIVE)] == "positive").mean() >= 0.8  # the head learned from the mean


@pytest.mark.slow  # a mean-pooled tiny run
def test_padding_does_not_change_the_outputs(mean_run: Path) -> None:
    from transformers import AutoTokenizer

    classifier = load(mean_run)
    tokenizer = AutoTokenizer.from_pretrained(mean_run)
    ids = tokenizer(["a joy to watch"], return_tensors="np")["input_ids"].astype(np.int32)  # (1, T)
    width = 16
    padded = np.zeros((1, width), np.int32)
    padded[0, : ids.shape[1]] = ids[0]
    mask = (np.arange(width) < ids.shape[1]).astype(np.int32)[None]
    alone = classifier.model(input_ids=ids, attention_mask=np.ones_like(ids), training=False).logits.numpy()
    with_padding = classifier.model(input_ids=padded, attention_mask=mask, training=False).logits.numpy()
    np.testing.assert_allclose(with_padding, alone, atol=1e-5)


@pytest.mark.slow  # a mean-pooled tiny run
def test_padding_a_batch_does_not_change_the_pooled_vector_of_its_texts(mean_run: Path) -> None:
    from transformers import AutoTokenizer

    from finetune.modeling import masked_mean

    model = load(mean_run).model
    tokenizer = AutoTokenizer.from_pretrained(mean_run)
    texts = ["a joy to watch", "dull", "it was not very good and the film was a mess"]
    batch = tokenizer(texts, padding="max_length", max_length=20, return_tensors="np")  # every text padded
    ids, mask = batch["input_ids"].astype(np.int32), batch["attention_mask"].astype(np.int32)
    pooled = masked_mean(model.bert(input_ids=ids, attention_mask=mask, training=False)[0], mask).numpy()
    for i, text in enumerate(texts):
        alone = tokenizer([text], return_tensors="np")["input_ids"].astype(np.int32)  # no padding at all
        hidden = model.bert(input_ids=alone, attention_mask=np.ones_like(alone), training=False)[0]
        np.testing.assert_allclose(pooled[i], hidden.numpy()[0].mean(axis=0), atol=1e-5)
    assert mask.sum(axis=1).min() < 20  # the batch did hold padding


def test_an_unknown_pooling_is_refused() -> None:
    with pytest.raises(ValueError, match="--pooling must be one of cls, mean, got 'max'"):
        FinetuneArguments(pooling="max")


@pytest.mark.slow
def test_a_mean_pooled_run_exports_files_that_serve_its_probabilities(mean_run: Path, tmp_path: Path) -> None:
    from core.export import load_float, load_int8
    from finetune.__main__ import main

    assert main(["export", str(mean_run), "--output-dir", str(tmp_path / "export"), "--no-evaluate"]) == 0
    texts = [*POSITIVE, *NEGATIVE]
    expected = load(mean_run).predict_proba(texts)
    np.testing.assert_allclose(load_float(tmp_path / "export")(texts), expected, atol=1e-5)
    int8 = load_int8(tmp_path / "export")(texts)  # the TFLite graph holds only ops its interpreter runs
    assert int8.shape == expected.shape
    np.testing.assert_allclose(int8.sum(axis=1), 1.0, atol=1e-5)
