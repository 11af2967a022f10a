"""The demo's predict functions on fake and on the tiny trained models: probabilities, errors, attention, warm-up;
each kind of task (pairs, multi-label, regression) on fakes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from demo import prediction
from demo.answers import answers
from demo.task import task_of
from tests.demo.fakes import EMOTIONS, LABELS, THRESHOLDS, FakeClassifier, FakeRegression, fake_models

ODD_TEXTS = [
    "😀🎬🍿 !!! ???",
    "...,,,;;;:::!!!",
    "qwzx vbnm plok zzyzx",
    "Ünïcödé façade naïve coöperate — «quotes» „and“ ‚more‘",
    "这部电影非常好看 これは映画です هذا فيلم رائع",
    "tab\tnew\nline\r\x00null",
    "a" * 4999,
    "<script>alert('x')</script> **markdown** `code` [link](http://x)",
]


@pytest.mark.slow
def test_predict_functions_of_both_trained_models(real_models: dict, tiny_runs: dict) -> None:
    import pandas as pd

    task_labels = sorted(pd.read_csv(tiny_runs["train_file"])["label"].unique())  # labels are the sorted values
    text = "superb acting, a joy to watch"
    result, latencies = prediction.classify_timed(text, "both", real_models)
    assert list(result) == ["finetune", "scratch"] and set(latencies) == set(result)
    for side, probs in result.items():
        assert list(probs) == task_labels == real_models[side].record.data.labels
        assert sum(probs.values()) == pytest.approx(1.0, abs=1e-5)
        assert all(0.0 <= p <= 1.0 for p in probs.values())
        np.testing.assert_allclose(list(probs.values()), real_models[side].predict_proba([text])[0], rtol=1e-5)
        assert prediction.classify(text, side, real_models)[side] == pytest.approx(probs, abs=1e-6)
    scratch = result["scratch"]  # the tiny scratch run learns the separable fixture
    assert scratch["positive"] > scratch["negative"]


def test_trained_models_answer_whatever_a_user_types(real_models: dict) -> None:
    for text in ODD_TEXTS:
        result = prediction.classify(text, "both", real_models)
        assert set(result) == {"finetune", "scratch"}, (text, result)
        assert all(sum(p.values()) == pytest.approx(1.0, abs=1e-5) for p in result.values())
        found = prediction.explain(real_models["scratch"], text)
        assert found is not None, text
        tokens, attention = found
        assert attention.shape[2:] == (len(tokens), len(tokens)) and "[PAD]" not in tokens
        np.testing.assert_allclose(attention.sum(axis=-1), 1.0, atol=1e-4)  # each query's weights sum to 1


def test_classify_both_models_gives_the_task_labels_and_probabilities_summing_to_one(fakes: dict) -> None:
    text = "a great film, superb acting"
    result = prediction.classify(text, "both", fakes)
    assert list(result) == ["finetune", "scratch"]
    for side, probs in result.items():
        assert list(probs) == LABELS
        assert sum(probs.values()) == pytest.approx(1.0, abs=1e-6)
        np.testing.assert_allclose(list(probs.values()), fakes[side].predict_proba([text])[0], rtol=1e-6)
    for side in ("finetune", "scratch"):
        assert prediction.classify(text, side, fakes) == {side: result[side]}
    result, latencies = prediction.classify_timed(text, "both", fakes)
    assert set(latencies) == {"finetune", "scratch"} and all(ms >= 0 for ms in latencies.values())


def test_input_the_models_must_not_see_is_answered_with_a_message(fakes: dict) -> None:
    for empty in ("", "   \n\t", None):
        assert prediction.classify(empty, "both", fakes) == {"error": "Type or paste some text to classify."}
    too_long = prediction.classify("b" * 101, "finetune", fakes, max_chars=100)
    assert too_long["error"].startswith("The text has 101 characters; this demo accepts at most 100.")
    assert "finetune" in prediction.classify("b" * 100, "finetune", fakes, max_chars=100)
    unknown = prediction.classify("fine", "bert", fakes)["error"]
    assert unknown == "Unknown model 'bert'; choose one of both, finetune, scratch."
    only_finetune = {"finetune": fakes["finetune"]}
    missing = prediction.classify("fine", "both", only_finetune)["error"]
    assert missing.startswith("The scratch model is not loaded (loaded: finetune)") and "make report" in missing
    assert "The finetune model is not loaded (loaded: none)" in prediction.classify("fine", "finetune", {})["error"]


def test_a_failing_model_is_reported_not_raised(fakes: dict) -> None:
    class Broken(FakeClassifier):
        def predict_proba(self, texts: list[str]) -> np.ndarray:
            raise RuntimeError("tensor shapes do not match")

    class NotFinite(FakeClassifier):
        def predict_proba(self, texts: list[str]) -> np.ndarray:
            return np.full((len(texts), 2), np.nan)

    models = {**fakes, "finetune": Broken("finetune")}
    assert prediction.classify("fine", "both", models) == {
        "error": "The finetune model could not classify this text: tensor shapes do not match"
    }
    assert "not all finite" in prediction.classify("fine", "finetune", {"finetune": NotFinite("finetune")})["error"]
    assert prediction.render_results({"error": "boom"}, {}, ["finetune", "scratch"]) == (None, None, "", "**boom**")


def test_render_results_fills_each_panel_and_the_latency_line(fakes: dict) -> None:
    result, latencies = prediction.classify_timed("a great film", "scratch", fakes)
    finetune, scratch, latency, status = prediction.render_results(
        result, {"scratch": 3.14159}, ["finetune", "scratch"]
    )
    assert finetune is None and scratch == result["scratch"] and status == ""
    assert latency == "Latency (one text, this machine): From-scratch Transformer: **3.1 ms**"


def test_a_distilled_student_is_offered_and_answers_beside_the_pair(three: dict) -> None:
    names = prediction.model_names(three)
    assert names == ["finetune", "scratch", "scratch-distilled"]
    text = "a great film, superb acting"
    result, latencies = prediction.classify_timed(text, "both", three)
    assert list(result) == names and list(latencies) == names
    for name, probs in result.items():
        np.testing.assert_allclose(list(probs.values()), three[name].predict_proba([text])[0], rtol=1e-6)
    alone = prediction.classify(text, "scratch-distilled", three)
    assert alone == {"scratch-distilled": result["scratch-distilled"]}
    assert prediction.classify(text, "student", three) == {
        "error": "Unknown model 'student'; choose one of both, finetune, scratch, scratch-distilled."
    }
    missing = prediction.classify(text, "both", {"scratch-distilled": three["scratch-distilled"]})["error"]
    assert missing.startswith("The finetune and scratch model is not loaded (loaded: scratch-distilled)")
    two = {name: three[name] for name in ("scratch", "scratch-distilled")}  # no fine-tuned run among them
    assert list(prediction.classify(text, "both", two)) == ["scratch", "scratch-distilled"]


def test_render_results_fills_the_panels_in_the_order_given(three: dict) -> None:
    names = ["finetune", "scratch", "scratch-distilled"]
    result, _ = prediction.classify_timed("a dull mess", "both", three)
    latencies = {"finetune": 12.0, "scratch": 2.31, "scratch-distilled": 1.5}
    *panels, latency, status = prediction.render_results(result, latencies, names)
    assert panels == [result[name] for name in names] and status == ""
    assert latency == (
        "Latency (one text, this machine): Fine-tuned BERT: **12.0 ms** · From-scratch Transformer: **2.3 ms** · "
        "From-scratch Transformer, distilled: **1.5 ms**"
    )
    alone = {"scratch-distilled": result["scratch-distilled"]}
    assert prediction.render_results(alone, {"scratch-distilled": 1.0}, names)[:3] == (
        None,
        None,
        alone["scratch-distilled"],
    )
    assert prediction.render_results({"error": "boom"}, {}, names) == (None, None, None, "", "**boom**")


def test_models_are_titled_by_name() -> None:
    assert [prediction.title(n) for n in ("finetune", "scratch", "scratch-distilled", "scratch-seed43")] == [
        "Fine-tuned BERT",
        "From-scratch Transformer",
        "From-scratch Transformer, distilled",
        "scratch-seed43",
    ]


def test_the_heatmap_follows_the_chosen_from_scratch_model(three: dict) -> None:
    assert prediction.attention_model(three, "scratch-distilled") is three["scratch-distilled"]
    assert prediction.attention_model(three, "scratch") is three["scratch"]
    assert prediction.attention_model(three, "both") is three["scratch"]
    assert prediction.attention_model(three, "finetune") is None
    assert prediction.attention_model({"finetune": three["finetune"]}, "both") is None
    assert prediction.attention_model(three, ["scratch"]) is None  # whatever the API is sent
    _, attention = prediction.explain(prediction.attention_model(three, "scratch-distilled"), "a great film")
    assert attention.shape == (1, 2, 3, 3)


def test_text_that_is_not_valid_unicode_is_answered_with_a_message(fakes: dict) -> None:
    text = "a great \ud800 film"  # a lone surrogate, as a JSON request can carry it
    expected = (
        "The text holds characters that are not valid Unicode (a lone surrogate at character 9); "
        "paste it again as plain text."
    )
    assert prediction.check_text(text, 100) == expected
    assert prediction.classify(text, "both", fakes) == {"error": expected}
    assert prediction.explain(fakes["scratch"], text) is None
    assert prediction.check_text("a great \U0001f3ac film", 100) is None  # a character beyond the BMP is fine


def test_explain_drops_padding_and_the_heatmap_shows_the_chosen_head(fakes: dict) -> None:
    scratch = fakes["scratch"]
    tokens, attention = prediction.explain(scratch, "a great film")
    full_tokens, full = scratch.explain("a great film")
    assert tokens == ["a", "great", "film"] and full_tokens[3:] == ["[PAD]"] * 5
    np.testing.assert_allclose(attention, full[:, :, :3, :3], rtol=1e-6)
    figure = prediction.attention_figure(tokens, attention, layer=1, head=2)
    np.testing.assert_allclose(figure.axes[0].images[0].get_array(), full[1, 2, :3, :3], rtol=1e-6)
    assert [t.get_text() for t in figure.axes[0].get_xticklabels()] == tokens
    mean = prediction.attention_figure(tokens, attention, layer=0, head=-1)
    np.testing.assert_allclose(mean.axes[0].images[0].get_array(), full[0, :, :3, :3].mean(axis=0), rtol=1e-6)
    assert "layer 1, mean over heads" in mean.axes[0].get_title()
    many = [f"t{i}" for i in range(100)]
    weights = np.random.default_rng(0).random((1, 1, 100, 100))
    capped = prediction.attention_figure(many, weights, layer=0, head=0)
    np.testing.assert_allclose(capped.axes[0].images[0].get_array(), weights[0, 0, :48, :48], rtol=1e-6)
    assert capped.axes[0].get_title().endswith("(first 48 of 100 tokens)")
    assert prediction.explain(scratch, "   ") is None and prediction.explain(fakes["finetune"], "text") is None
    assert prediction.explain(scratch, "x" * 100_001) is None  # over the limit: no heatmap either


class Recording(FakeClassifier):
    """Remembers every batch it was asked to predict."""

    def __init__(self, side: str) -> None:
        super().__init__(side)
        self.calls: list[list[str]] = []

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return super().predict_proba(texts)


def test_warm_up_predicts_one_text_with_each_model_and_reports_a_failure() -> None:
    class Broken(FakeClassifier):
        def predict_proba(self, texts: list[str]) -> np.ndarray:
            raise RuntimeError("no graph")

    models: dict[str, Any] = {"finetune": Recording("finetune"), "scratch": Recording("scratch")}
    assert prediction.warm_up(models) == []
    assert all(model.calls == [[prediction.WARM_UP_TEXT]] for model in models.values())
    problems = prediction.warm_up({"finetune": Broken("finetune")})
    assert problems == ["The finetune model failed its first prediction: no graph"]


# --- pairs, multi-label and regression ----------------------------------------------------------------------

KINDS = [
    ("single_label_classification", True),
    ("multi_label_classification", False),
    ("multi_label_classification", True),
    ("regression", True),
    ("regression", False),
]


@pytest.mark.parametrize(("problem_type", "pairs"), KINDS)
def test_classify_answers_each_kind_with_the_models_own_outputs(problem_type: str, pairs: bool) -> None:
    models = fake_models(problem_type, pairs)
    text, pair = "so glad and happy, a great film", "happy and glad"
    result, latencies = prediction.classify_timed(text, "both", models, text_pair=pair if pairs else None)
    assert list(result) == ["finetune", "scratch"] == list(latencies)
    for name, model in models.items():
        assert result[name] == answers(model, [text], [pair] if pairs else None)[0]
        if problem_type == "regression":
            assert result[name] == {
                "value": pytest.approx(float(model.predict_values([text], [pair] if pairs else None)[0]))
            }
        else:
            probs = model.predict_proba([text], [pair]) if pairs else model.predict_proba([text])
            shown = result[name]["probs"] if problem_type == "multi_label_classification" else result[name]
            np.testing.assert_allclose(list(shown.values()), probs[0], rtol=1e-12)
        if problem_type == "multi_label_classification":
            assert result[name]["label"] == [
                EMOTIONS[k] for k in np.flatnonzero(model.kind.decide(probs, model.thresholds)[0])
            ]
    assert prediction.classify(text, "scratch", models, text_pair=pair if pairs else None) == {
        "scratch": result["scratch"]
    }


def test_a_pair_task_needs_its_second_text_and_a_single_text_task_refuses_one() -> None:
    pairs, single = fake_models("regression", True), fake_models("multi_label_classification", False)
    missing = "This task compares two texts: type the second one (sentence2) too."
    for absent in (None, "", "  \n"):
        assert prediction.classify("a man plays", "both", pairs, text_pair=absent) == {"error": missing}
    assert prediction.classify("", "both", pairs, text_pair="a man plays") == {
        "error": "Type or paste some text to classify."
    }
    assert prediction.classify("a man plays", "both", pairs, text_pair=42) == {
        "error": "The second text must be a string, got 42 (int)."
    }
    long = prediction.classify("a man plays", "finetune", pairs, max_chars=20, text_pair="b" * 21)["error"]
    assert long.startswith("The second text has 21 characters; this demo accepts at most 20.")
    assert prediction.classify("a man plays", "both", pairs, text_pair="a \ud800")["error"].startswith(
        "The second text holds characters that are not valid Unicode (a lone surrogate at character 3)"
    )
    refused = (
        "The loaded runs classify single texts, not pairs: send no text_pair (got 'a second text'), or start the "
        "app with runs of a pair task."
    )
    assert prediction.classify("so glad", "both", single, text_pair="a second text") == {"error": refused}
    assert "got 42" in prediction.classify("so glad", "both", single, text_pair=42)["error"]
    for nothing in (None, ""):  # the page's hidden second box sends ""
        assert set(prediction.classify("so glad", "both", single, text_pair=nothing)) == {"finetune", "scratch"}


ODD_INPUTS = [None, "", " ", 42, 4.5, True, [], ["a"], {"text": "a"}, "x" * 6000, "\ud800", "\x00", *ODD_TEXTS[:3]]


@pytest.mark.parametrize(("problem_type", "pairs"), KINDS)
def test_whatever_a_client_sends_is_answered_never_raised(problem_type: str, pairs: bool, caplog) -> None:
    models = fake_models(problem_type, pairs)
    for text in ODD_INPUTS:
        for pair in ODD_INPUTS:
            for choice in ("both", "scratch", "bert", 3, None):
                result = prediction.classify(text, choice, models, text_pair=pair)
                assert isinstance(result, dict) and result, (text, pair, choice)
                assert "error" in result or set(result) <= set(models), (text, pair, choice)
                explained = prediction.explain(models["scratch"], text, text_pair=pair)
                assert explained is None or explained[1].ndim == 4
    assert [record.getMessage() for record in caplog.records if record.exc_info] == []  # no traceback logged


def test_a_multi_label_panel_shows_each_probability_its_threshold_and_the_chosen_labels() -> None:
    models = fake_models("multi_label_classification", True)
    result, latencies = prediction.classify_timed("furious and sad, in tears", "both", models, text_pair="so sad")
    task = task_of(models["finetune"].record)
    finetune, scratch, latency, status = prediction.render_results(result, latencies, ["finetune", "scratch"], task)
    assert status == "" and latency.startswith("Latency (one text, this machine): Fine-tuned BERT: **")
    answer = result["finetune"]
    assert answer["label"] == ["anger", "sadness"]
    lines = finetune.splitlines()
    assert lines[0] == "**Chosen:** `anger`, `sadness`"
    assert lines[2:4] == ["| label | probability | threshold |", "|---|---:|---:|"]
    assert lines[4:] == [
        f"| {f'✓ **{label}**' if label in answer['label'] else label} | {answer['probs'][label]:.3f} | {threshold:.3f} |"
        for label, threshold in zip(EMOTIONS, THRESHOLDS["finetune"])
    ]
    assert "| ✓ **anger** | 0.731 | 0.350 |" in lines and "| neutral | 0.182 | 0.600 |" in lines  # by hand
    nothing = {"label": [], "probs": {"joy": 0.2}, "thresholds": {"joy": 0.5}}
    assert prediction.panel(nothing, task).startswith("**Chosen:** none: no label reaches its threshold")


def test_a_regression_panel_shows_the_value_on_the_train_scale() -> None:
    models = fake_models("regression", True)
    result, latencies = prediction.classify_timed(
        "a man plays a guitar", "both", models, text_pair="a man plays a piano"
    )
    task = task_of(models["finetune"].record)
    finetune, scratch, _, status = prediction.render_results(result, latencies, ["finetune", "scratch"], task)
    assert result == {"finetune": {"value": pytest.approx(3.0)}, "scratch": {"value": pytest.approx(3.25)}}
    assert finetune == "### 3\n\nThe train split's values run from 0 to 5."
    assert scratch == "### 3.25\n\nThe train split's values run from 0 to 5."
    unscaled = task_of(FakeRegression("finetune", value_range=None).record)
    assert prediction.panel({"value": 3.14159}, unscaled) == "### 3.142"
    assert prediction.render_results({"error": "boom"}, {}, ["finetune", "scratch"], task) == (
        None,
        None,
        "",
        "**boom**",
    )


def test_warm_up_asks_a_pair_task_s_models_with_a_pair() -> None:
    class Recording(FakeRegression):
        calls: list = []

        def predict_values(self, texts: list[str], text_pairs: list[str] | None = None) -> np.ndarray:
            self.calls.append((list(texts), text_pairs))
            return super().predict_values(texts, text_pairs)

    assert prediction.warm_up({"scratch": Recording("scratch")}) == []
    assert Recording.calls == [([prediction.WARM_UP_TEXT], [prediction.WARM_UP_PAIR])]


def test_the_heatmap_of_a_pair_covers_both_texts() -> None:
    scratch = fake_models("multi_label_classification", True)["scratch"]
    tokens, attention = prediction.explain(scratch, "so glad", text_pair="very happy")
    assert tokens == ["so", "glad", "[SEP]", "very", "happy"] and attention.shape == (2, 3, 5, 5)
    assert prediction.explain(scratch, "so glad") is None  # no second text: no heatmap, as no answer


class WindowReader(FakeClassifier):
    """A fake that reads long texts in windows of 10 words, the last window deciding."""

    def __init__(self, side: str) -> None:
        from core.long_text import CHUNKS, Reading

        super().__init__(side)
        self.reading = Reading(CHUNKS, stride=0)

    def windows_read(self, text: str) -> tuple[int, int]:
        count = max(1, -(-len(text.split()) // 10))
        return count, count - 1


def test_a_model_reading_in_windows_says_how_many_it_read_and_which_decided(fakes: dict) -> None:
    models = {**fakes, "scratch": WindowReader("scratch")}
    text = " ".join(["great"] * 25)  # three windows of 10 words
    result, latencies = prediction.classify_timed(text, "both", models)
    assert result["windows"] == {"scratch": {"read": 3, "decided": 3}}  # finetune reads one window: not listed
    *_, latency, _ = prediction.render_results(result, latencies, ["finetune", "scratch"])
    assert latency.endswith(f"Long text: {prediction.title('scratch')} read 3 windows; window 3 decided.")
    assert "windows" not in prediction.classify("great", "both", fakes)
