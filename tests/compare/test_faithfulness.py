"""Faithfulness of attributions (`compare.scoring.faithfulness`) on a hand-worked case, and its report section."""

from __future__ import annotations

import numpy as np
import pytest

from compare.render.faithfulness import faithfulness_html, faithfulness_markdown
from compare.render.html import html_table
from compare.render.markdown import markdown_table
from compare.scoring.faithfulness import faithfulness, removal_counts, sample_indices
from core.attribution import Attribution
from core.classifier import BaseClassifier

TEXT = "good nice a b c d e f g h"  # ten words


class WordCounter(BaseClassifier):
    """p(positive) = 0.2, + 0.3 with "good", + 0.1 with "nice": a model whose answer two words decide."""

    side = "counter"

    def outputs(self, texts, text_pairs=None):
        positive = np.array([0.2 + 0.3 * ("good" in t.split()) + 0.1 * ("nice" in t.split()) for t in texts])
        return np.stack([1 - positive, positive], axis=1)


def attribution(scores: list[float]) -> Attribution:
    return Attribution(TEXT.split(), scores, 0.0, "positive", 0.0, 0.0)


def test_aopc_of_a_hand_worked_case():
    model = WordCounter(labels=["negative", "positive"])
    right = attribution([0.3, 0.1, 0, 0, 0, 0, 0, 0, 0, 0])  # good, then nice, first
    entry = faithfulness(model, [TEXT], None, [right])
    # removal_counts(10) = [1, 1, 1, 2, 5]: without "good" p = 0.3 three times, without both p = 0.2 twice
    assert entry["comprehensiveness_ig"] == pytest.approx((3 * 0.3 + 2 * 0.4) / 5)
    # only "good": p = 0.5 three times (drop 0.1); "good" and "nice" (and more): p = 0.6, no drop
    assert entry["sufficiency_ig"] == pytest.approx(3 * 0.1 / 5)
    assert entry["null_difference"] == pytest.approx(0.4)  # 0.6 with every word, 0.2 with none
    assert entry["comprehensiveness_ig_normalised"] == pytest.approx(0.34 / 0.4)
    assert entry["sufficiency_ig_normalised"] == pytest.approx(0.06 / 0.4)
    # no order beats the attribution's: a random one removes "good" later or never
    assert entry["comprehensiveness_random"] <= entry["comprehensiveness_ig"]
    assert entry["sufficiency_random"] >= entry["sufficiency_ig"]


def test_a_wrong_attribution_scores_worse_than_the_right_one():
    model = WordCounter(labels=["negative", "positive"])
    wrong = attribution([-0.3, -0.1, 0, 0, 0, 0, 0, 0, 0.2, 0.3])  # h, g first: the answer's words last
    entry = faithfulness(model, [TEXT], None, [wrong])
    assert entry["comprehensiveness_ig"] == pytest.approx(0.0)  # the five removed never include good or nice
    assert entry["sufficiency_ig"] == pytest.approx(0.4)  # kept h, g...: p falls to 0.2 at every k
    assert entry["ig_beats_random"] == 0.0


def test_removal_counts_and_the_sample():
    assert removal_counts(3) == [1, 1, 1, 1, 2]
    assert removal_counts(200) == [2, 10, 20, 40, 100]
    assert sample_indices(5, 10) == [0, 1, 2, 3, 4]
    chosen = sample_indices(1000, 20)
    assert chosen == sorted(set(chosen)) and len(chosen) == 20 and chosen == sample_indices(1000, 20)


def test_the_report_section_highlights_each_model_s_words():
    entry = {
        "comprehensiveness_ig": 0.3,
        "comprehensiveness_random": 0.1,
        "comprehensiveness_ig_normalised": 0.75,
        "comprehensiveness_random_normalised": 0.25,
        "sufficiency_ig": 0.05,
        "sufficiency_random": 0.2,
        "sufficiency_ig_normalised": 0.125,
        "sufficiency_random_normalised": 0.5,
        "ig_beats_random": 0.9,
        "mean_gap": 0.01,
        "seconds": 12.0,
    }
    example = {"words": ["a", "dull", "film"], "scores": [0.0, 0.8, -0.4], "target": "negative"}
    results = {
        "models": {"finetune": {"faithfulness": entry}, "scratch": {"faithfulness": entry}},
        "faithfulness": {
            "examples": 50,
            "sample_seed": 0,
            "seconds": 24.0,
            "highlighted": [{"index": 7, "text": "a dull film", "models": {"finetune": example, "scratch": example}}],
        },
    }
    page = faithfulness_html(results, html_table)
    assert page.count("rgba(34, 160, 80, 1.00)") == 2 and page.count("rgba(214, 60, 60, 0.50)") == 2
    assert "0.300 / 0.100" in page and "90%" in page and "added 24 s" in page
    text = faithfulness_markdown(results, markdown_table)
    assert "**dull (+0.80)**" in text and "| finetune | 0.300 / 0.100 | 0.75 / 0.25 |" in text
    assert faithfulness_html({"models": {}}, html_table) == "" == faithfulness_markdown({"models": {}}, markdown_table)
