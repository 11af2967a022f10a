"""Integrated Gradients for both sides (`core.attribution`): completeness, a planted word, pairs, multi-label."""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest
import tensorflow as tf

from core.attribution import completeness_gap
from core.long_text import HEAD, HEAD_TAIL, Reading
from tests.core.attribution_models import FIXTURE_TEXTS, finetuned_model, largest_is, scratch_model

LABELS = ["negative", "positive"]


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict:
    return {
        "scratch": scratch_model(LABELS),
        "finetune": finetuned_model(tmp_path_factory.mktemp("bert"), LABELS),
    }


@pytest.mark.parametrize("side", ["scratch", "finetune"])
def test_scores_add_up_to_the_output_difference_within_five_percent(models, side):
    explained = models[side].attribute(FIXTURE_TEXTS)
    probabilities = models[side].predict_proba(FIXTURE_TEXTS)
    for text, attribution, row in zip(FIXTURE_TEXTS, explained, probabilities, strict=True):
        assert attribution.words == text.split()
        assert len(attribution.scores) == len(attribution.words)
        assert attribution.target == LABELS[int(np.argmax(row))]
        assert attribution.output == pytest.approx(float(np.log(row.max() / (1 - row.max()))), abs=1e-3)  # log-odds
        difference = attribution.output - attribution.baseline_output
        assert abs(sum(attribution.scores) - difference) < 0.05 * abs(difference)
        assert attribution.gap == pytest.approx(
            completeness_gap(np.array(attribution.scores), *_ends(attribution)), rel=1e-2
        )


def _ends(attribution) -> tuple[float, float]:
    return attribution.output, attribution.baseline_output


@pytest.mark.parametrize("side", ["scratch", "finetune"])
def test_a_named_label_is_explained_and_more_steps_shrink_the_gap(models, side):
    [coarse] = models[side].attribute(["a dull mess and superb acting"], target="positive", steps=2)
    [fine] = models[side].attribute(["a dull mess and superb acting"], target="positive", steps=64)
    assert coarse.target == fine.target == "positive"
    assert fine.gap < coarse.gap or coarse.gap < 1e-4
    probability = models[side].predict_proba(["a dull mess and superb acting"])[0, 1]
    assert fine.output == pytest.approx(float(np.log(probability / (1 - probability))), abs=1e-3)
    with pytest.raises(ValueError, match="target must be one of the labels"):
        models[side].attribute(["a dull mess"], target="neutral")


@pytest.mark.parametrize("side", ["scratch", "finetune"])
def test_words_past_the_length_limit_score_zero_and_odd_texts_do_not_break_it(models, side):
    long_text = " ".join(["superb acting"] * 40)
    model = copy.copy(models[side])
    model.reading = Reading(HEAD)  # the fine-tuned side's; the from-scratch side's tokenizer layer reads the head
    [long, emoji, empty] = model.attribute([long_text, "superb 🎉🎉 acting!!", ""])
    assert len(long.words) == 80 and all(score == 0.0 for score in long.scores[30:])
    assert long.gap < 0.05
    assert emoji.words == ["superb", "🎉🎉", "acting!!"] and emoji.gap < 0.05
    assert empty.words == [] and empty.scores == [] and empty.gap == 0.0


def test_under_head_tail_the_middle_scores_zero_and_both_ends_are_attributed(models):
    model = copy.copy(models["finetune"])
    model.reading = Reading(HEAD_TAIL)  # 6 + 16 of the 22 pieces between [CLS] and [SEP] (max_length 24)
    [long] = model.attribute([" ".join(["superb acting"] * 40)])
    read = np.abs(np.array(long.scores)) > 0
    assert read[:6].all() and not read[6:64].any() and read[64:].all()
    assert long.gap < 0.05


@pytest.mark.slow  # a model of its kind built for the test
@pytest.mark.parametrize("side", ["scratch", "finetune"])
def test_pairs_give_the_first_text_s_words_then_the_second_s(tmp_path, side):
    texts, pairs = ["a great film", "i hated it"], ["a dull mess", "superb acting"]
    corpus = [*FIXTURE_TEXTS, *pairs]
    model = (
        scratch_model(LABELS, pairs=True, texts=corpus)
        if side == "scratch"
        else finetuned_model(tmp_path, LABELS, pairs=True)
    )
    for text, pair, attribution in zip(texts, pairs, model.attribute(texts, pairs), strict=True):
        assert attribution.words == text.split() + pair.split()
        assert attribution.gap < 0.05
        assert any(score != 0.0 for score in attribution.scores[len(text.split()) :])  # the second text counts
    with pytest.raises(ValueError, match="text_pairs"):
        model.attribute(texts)


@pytest.mark.slow  # a model of its kind built for the test
@pytest.mark.parametrize("side", ["scratch", "finetune"])
def test_multi_label_explains_each_chosen_label(tmp_path, side):
    labels = ["joy", "anger", "fear"]
    model = (
        scratch_model(labels, "multi_label_classification")
        if side == "scratch"
        else finetuned_model(tmp_path, labels, "multi_label_classification")
    )
    model.thresholds = [0.0, 0.0, 1.0]  # joy and anger always chosen, fear never
    [attribution] = model.attribute(["a great film"])
    probabilities = model.predict_proba(["a great film"])[0]
    first = "joy" if probabilities[0] >= probabilities[1] else "anger"
    assert attribution.target == first and set(attribution.by_label) == {"joy", "anger"}
    for label, explained in attribution.by_label.items():
        p = probabilities[labels.index(label)]
        assert explained.output == pytest.approx(float(np.log(p / (1 - p))), abs=1e-3)  # the label's log-odds
        assert explained.gap < 0.05
    [named] = model.attribute(["a great film"], target=["fear", "joy"])
    assert named.target == "fear" and list(named.by_label) == ["fear", "joy"]
    assert named.by_label["joy"].scores == pytest.approx(attribution.by_label["joy"].scores, abs=1e-6)


@pytest.mark.slow  # a model of its kind built for the test
@pytest.mark.parametrize("side", ["scratch", "finetune"])
def test_regression_explains_the_value(tmp_path, side):
    model = (
        scratch_model([], "regression", pairs=True)
        if side == "scratch"
        else finetuned_model(tmp_path, [], "regression", pairs=True)
    )
    [attribution] = model.attribute(["a great film"], ["a dull mess"])
    assert attribution.target is None
    assert attribution.output == pytest.approx(
        float(model.predict_values(["a great film"], ["a dull mess"])[0]), abs=1e-5
    )
    assert attribution.gap < 0.05
    with pytest.raises(ValueError, match="explains its value"):
        model.attribute(["a great film"], ["a dull mess"], target="positive")


# --- a planted word decides the label ---------------------------------------------------------------------------------

FILLER = ["the", "film", "movie", "it", "was", "a", "and", "very", "of", "time", "minute", "every", "to", "watch"]
PLANTED = "superb"


def planted_rows(n: int, seed: int, planted_only: bool = False) -> tuple[list[str], np.ndarray]:
    """Texts of six filler words; every other one (each, with `planted_only`) has "superb" put in at a random place,
    and only those are labelled 1: the one word decides the label."""
    rng = random.Random(seed)
    texts, labels = [], []
    for i in range(n):
        words = rng.sample(FILLER, 6)
        has = planted_only or i % 2 == 0
        if has:
            words.insert(rng.randrange(7), PLANTED)
        texts.append(" ".join(words))
        labels.append(int(has))
    return texts, np.array(labels)


@pytest.mark.slow  # two models trained for a few hundred steps
def test_the_planted_word_carries_the_largest_attribution_for_both_trained_models(tmp_path):
    train_texts, train_labels = planted_rows(240, seed=0)
    test_texts, test_labels = planted_rows(10, seed=1, planted_only=True)

    scratch = scratch_model(LABELS, texts=train_texts)
    scratch.model.compile(tf.keras.optimizers.Adam(3e-3), "sparse_categorical_crossentropy")
    scratch.model.fit(tf.constant(train_texts), train_labels, batch_size=16, epochs=10, verbose=0)
    assert (scratch.predict(test_texts) == test_labels).mean() >= 0.9  # it learned the task

    finetuned = finetuned_model(tmp_path, LABELS)
    encoded = dict(finetuned.tokenizer(train_texts, padding=True, return_tensors="tf"))
    loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    finetuned.model.compile(tf.keras.optimizers.Adam(5e-3), loss)
    finetuned.model.fit(encoded, train_labels, batch_size=16, epochs=2, verbose=0)

    for model in (scratch, finetuned):
        explained = model.attribute(test_texts)
        hits = sum(largest_is(attribution, PLANTED) for attribution in explained)
        assert hits >= 9, (model.side, [(a.target, a.words, np.round(a.scores, 3)) for a in explained])
