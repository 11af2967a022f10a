import json
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from core.args import DataArguments
from core.classifier import Classifier, load
from core.data import load_task
from core.record import read_run
from core.rundir import RunError
from scratch import predict
from scratch.pipeline import predict_logits, tokenize
from tests.conftest import ROOT

TEXTS = ["a great film superb acting", "i hated it", "", "words never seen before", "a dull mess " * 30]


@pytest.fixture(scope="module")
def model(tiny_run):
    return load(tiny_run)


def test_loads_through_core_as_a_classifier(model, tiny_run):
    assert isinstance(model, Classifier)
    assert (model.name, model.side, model.labels) == ("scratch", "scratch", ["negative", "positive"])
    assert model.record == read_run(tiny_run)


def test_reloaded_model_reproduces_the_recorded_validation_accuracy(model, tiny_run):
    options = model.record.data.options
    data = load_task(DataArguments(train_file=options["train_file"], seed=options["seed"]))
    probabilities = model.predict_proba(data.texts("validation"))
    accuracy = float((probabilities.argmax(axis=1) == data.label_ids("validation")).mean())
    assert accuracy == pytest.approx(model.record.validation["accuracy"])


def test_probabilities_equal_the_softmax_of_the_classifier_logits_at_the_run_s_temperature(model):
    probabilities = model.predict_proba(TEXTS)
    classifier = model.model.get_layer("classifier")
    logits = predict_logits(classifier, tokenize(model.tokenizer, TEXTS))
    (temperature,) = model.temperatures  # fitted on validation after training (core.calibration)
    assert temperature > 0 and temperature != 1.0
    np.testing.assert_allclose(probabilities, tf.nn.softmax(logits / temperature).numpy(), atol=1e-5)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, atol=1e-6)
    assert probabilities.shape == (len(TEXTS), 2) and probabilities.dtype == np.float32


def test_order_and_batching_do_not_change_a_text_s_probabilities(model):
    batch_size, model.batch_size = model.batch_size, 2
    together = model.predict_proba(TEXTS)
    model.batch_size = batch_size
    one_by_one = np.concatenate([model.predict_proba([text]) for text in TEXTS])
    reversed_order = model.predict_proba(TEXTS[::-1])[::-1]
    np.testing.assert_allclose(together, one_by_one, atol=1e-5)
    np.testing.assert_allclose(reversed_order, one_by_one, atol=1e-5)
    assert model.predict_proba([]).shape == (0, 2)


def test_learned_the_fixture(model):
    probabilities = model.predict_proba(["a great film", "a dull mess"])
    np.testing.assert_array_equal(probabilities.argmax(axis=1), [1, 0])  # positive, negative


def test_explain_gives_tokens_and_one_attention_map_per_layer_and_head(model):
    tokens, attention = model.explain("A great film, superb ACTING zzz")
    assert tokens == ["a", "great", "film", "superb", "acting", "[UNK]"]
    config = model.record.model.config
    assert attention.shape == (config["num_layers"], config["num_heads"], 6, 6)
    np.testing.assert_allclose(attention.sum(axis=-1), 1.0, atol=1e-5)
    assert (attention >= 0).all()
    tokens, attention = model.explain("")
    assert tokens == ["[UNK]"] and attention.shape[-2:] == (1, 1)


def test_a_run_without_its_model_file_is_refused(tiny_run, tmp_path):
    with pytest.raises(RunError, match="has no model.keras"):
        predict.load(tmp_path, read_run(tiny_run))


@pytest.mark.slow
def test_a_fresh_process_that_imports_only_core_loads_the_run_and_gives_the_same_probabilities(model, tiny_run):
    # What compare, the app and a user's script do: no training module is imported before the load.
    script = (
        "import json, sys; from core.classifier import load; "
        "print(json.dumps(load(sys.argv[1]).predict_proba(json.loads(sys.argv[2])).tolist()))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tiny_run), json.dumps(TEXTS)],
        capture_output=True,
        text=True,
        check=False,
        cwd=str(ROOT),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    np.testing.assert_allclose(
        np.array(json.loads(done.stdout.strip().splitlines()[-1])), model.predict_proba(TEXTS), atol=1e-6
    )
