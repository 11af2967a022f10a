"""The model card's view of each kind (`core.card`): what a model of the kind is called and what its lines say."""

from __future__ import annotations

from core import kinds
from core.card import carded
from core.kinds import MULTI_LABEL, REGRESSION, SINGLE_LABEL

SINGLE, MULTI, VALUES = (carded(kinds.get(name)) for name in (SINGLE_LABEL, MULTI_LABEL, REGRESSION))


def test_each_kind_s_card_names_its_model_and_its_scores():
    assert [k.noun for k in (SINGLE, MULTI, VALUES)] == [
        "text classifier",
        "multi-label text classifier",
        "text regression model",
    ]
    assert VALUES.call.format(inputs="[]", n=0) == "predict_values([])  # (1,)"
    assert MULTI.scores({"macro_f1": 0.5}, ["a"], [0.25]).endswith("on validation: `a` 0.2500)")
