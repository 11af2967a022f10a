"""The Classify tab's attributions (highlighted words, the `/classify` flag) and its abstention below a confidence."""

from __future__ import annotations

import pytest

from demo import prediction
from tests.demo.fakes import FakeRegression, fake_models

TEXT = "a great film but a dull ending"


def test_the_classify_flag_returns_each_model_s_attribution(fakes: dict) -> None:
    plain = prediction.classify(TEXT, "both", fakes)
    assert set(plain) == {"finetune", "scratch"}  # no flag: the answers alone, as before
    result = prediction.classify(TEXT, "both", fakes, attributions=True)
    assert {name: result[name] for name in fakes} == plain
    for name, found in result["attributions"].items():
        answer = max(plain[name], key=plain[name].get)
        assert found["target"] == answer
        assert found["words"] == TEXT.split()
        assert found["scores"][found["words"].index("great")] == (1.0 if answer == "positive" else -1.0)
    assert set(result["attributions"]) == {"finetune", "scratch"}


def test_a_model_that_cannot_attribute_still_answers(fakes: dict) -> None:
    result = prediction.classify("a great crash", "both", fakes, attributions=True)
    assert result["attributions"] == {"finetune": None, "scratch": None}
    assert set(result["finetune"]) == {"negative", "positive"}


def test_the_page_highlights_each_model_s_words_side_by_side(fakes: dict) -> None:
    result = prediction.classify(TEXT, "both", fakes, attributions=True)
    page = prediction.attribution_html(result["attributions"], ["finetune", "scratch"])
    assert page.count('class="why-column"') == 2
    assert page.index(prediction.title("finetune")) < page.index(prediction.title("scratch"))
    # full colour for the largest push, towards the answer (green) or against it (red)
    assert page.count("rgba(34, 160, 80, 1.00)") + page.count("rgba(214, 60, 60, 1.00)") == 4
    assert page.count("rgba(34, 160, 80, 0.00)") == 2 * 5  # five words with no push, in each column
    assert prediction.attribution_html({"finetune": None}, ["finetune"]) == ""
    escaped = prediction.attribution_html(
        {"finetune": {"target": "positive", "words": ["<b>"], "scores": [1.0]}}, ["finetune"]
    )
    assert "&lt;b&gt;" in escaped and "<b>" not in escaped.replace("<b>positive</b>", "")


def test_a_model_below_the_confidence_set_abstains_and_the_page_says_so(fakes: dict) -> None:
    answers = prediction.classify(TEXT, "both", fakes)
    sure = {name: max(answer.values()) for name, answer in answers.items()}
    between = (min(sure.values()) + max(sure.values())) / 2
    result = prediction.classify(TEXT, "both", fakes, min_confidence=between)
    unsure = min(sure, key=sure.get)
    assert result["abstained"] == {unsure: pytest.approx(sure[unsure])}
    *_, status = prediction.render_results(result, {}, ["finetune", "scratch"], min_confidence=between)
    assert f"{prediction.title(unsure)} abstains" in status and f"{between:.2f}" in status
    assert prediction.classify(TEXT, "both", fakes, min_confidence=0.0) == answers
    assert prediction.classify(TEXT, "both", fakes, min_confidence=1.0)["abstained"].keys() == sure.keys()


def test_a_multi_label_model_abstains_by_its_least_sure_label() -> None:
    models = fake_models("multi_label_classification", False)
    answer = prediction.classify("a joyful day", "finetune", models)["finetune"]
    least = min(max(p, 1 - p) for p in answer["probs"].values())
    result = prediction.classify("a joyful day", "finetune", models, min_confidence=least + 0.01)
    assert result["abstained"] == {"finetune": pytest.approx(least)}


def test_a_model_of_values_never_abstains() -> None:
    models = {"finetune": FakeRegression("finetune")}
    result = prediction.classify("a man plays", "finetune", models, text_pair="a man sings", min_confidence=0.99)
    assert result["abstained"] == {} and "value" in result["finetune"]


@pytest.mark.parametrize("bad", [-0.1, 1.5, "high", True])
def test_a_confidence_out_of_range_is_answered_with_a_message(fakes: dict, bad) -> None:
    assert (
        "min_confidence must be a number from 0 to 1"
        in prediction.classify(TEXT, "both", fakes, min_confidence=bad)["error"]
    )


@pytest.mark.slow
def test_the_trained_models_attribute_whatever_a_user_types(real_models: dict) -> None:
    from tests.demo.test_prediction import ODD_TEXTS

    for text in [*ODD_TEXTS[:5], ODD_TEXTS[7]]:
        result = prediction.classify(text, "both", real_models, attributions=True, min_confidence=0.5)
        assert set(result["attributions"]) == {"finetune", "scratch"}, text
        for found in result["attributions"].values():
            assert found is not None and len(found["scores"]) == len(found["words"]) == len(text.split()), text
    assert "error" in prediction.classify("", "both", real_models, attributions=True)


def test_a_model_that_declares_no_attribution_is_not_asked_for_one(fakes: dict) -> None:
    class Silent(type(fakes["finetune"])):
        attributes = False

        def attribute(self, *args, **kwargs):
            raise AssertionError("a model without attributions was asked for one")

    models = {**fakes, "finetune": Silent("finetune")}
    result = prediction.classify(TEXT, "both", models, attributions=True)
    assert result["attributions"]["finetune"] is None
    assert result["attributions"]["scratch"] is not None
