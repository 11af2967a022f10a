"""Random-weight (or briefly trained) classifiers of both sides, built in memory, for the attribution tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import tensorflow as tf

from compare.kinds import reported
from core import kinds
from finetune.predict import FinetunedClassifier
from scratch.model import build_classifier, build_end_to_end, config_from_preset
from scratch.predict import ScratchClassifier
from scratch.tokenizer import WordTokenizer
from tests.conftest import NEGATIVE, POSITIVE
from tests.finetune.tiny import make_tiny_bert

FIXTURE_TEXTS = [*POSITIVE, *NEGATIVE]
MAX_LENGTH = 24
HEAD_SCALE = 300.0  # a random BERT's pooled outputs barely differ between texts: its head is scaled up


def scratch_model(
    labels: list[str], problem_type: str | None = None, pairs: bool = False, texts: list[str] = FIXTURE_TEXTS, seed=0
) -> ScratchClassifier:
    """The tiny preset with random weights, its word vocabulary adapted on `texts`."""
    tf.keras.utils.set_random_seed(seed)
    kind = kinds.get(problem_type)
    tokenizer = WordTokenizer.adapt(texts, vocab_size=200, max_length=MAX_LENGTH, pairs=pairs, name="tokenizer")
    config = config_from_preset("tiny", num_labels=kind.num_outputs(len(labels)), problem_type=kind.name, pairs=pairs)
    classifier = build_classifier(config, len(tokenizer.vocabulary), tokenizer.separator_id)
    model = build_end_to_end(tokenizer, classifier, kind, pairs)
    thresholds = [0.5] * len(labels) if reported(kind).decides_by_thresholds else None
    return ScratchClassifier(model, kind=kind, labels=labels, has_pairs=pairs, thresholds=thresholds)


def finetuned_model(
    folder: Path, labels: list[str], problem_type: str | None = None, pairs: bool = False, seed: int = 0
) -> FinetunedClassifier:
    """The tiny random-weight BERT (`tests.finetune.tiny`) with a random classification head, `HEAD_SCALE` times
    larger than its initialiser gives."""
    from transformers import AutoTokenizer, BertConfig, TFBertForSequenceClassification

    kind = kinds.get(problem_type)
    make_tiny_bert(folder, seed=seed)
    config = BertConfig.from_pretrained(folder, num_labels=kind.num_outputs(len(labels)))
    tf.keras.utils.set_random_seed(seed)
    model = TFBertForSequenceClassification(config)
    model(model.dummy_inputs, training=False)
    kernel, bias = model.classifier.get_weights()
    model.classifier.set_weights([kernel * HEAD_SCALE, bias])  # else the texts move its outputs by about 1e-5
    tokenizer = AutoTokenizer.from_pretrained(folder)
    return FinetunedClassifier(model, tokenizer, MAX_LENGTH, kind=kind, labels=labels, has_pairs=pairs)


def largest_is(attribution, word: str) -> bool:
    """Whether `word` carries the largest score of the attribution's words."""
    return attribution.words[int(np.argmax(attribution.scores))] == word
