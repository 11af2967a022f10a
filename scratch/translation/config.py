"""The shape of a translation model: its configuration dataclass and the presets, free of TensorFlow.

The command line's options (`scratch.translation.args`) build and check a `TranslationConfig` before TensorFlow
loads; `scratch.translation.model` builds the network from it. Presets are data: `tiny` for tests, `small` for a
short run on a CPU, `base` twice as wide (d_model 256, d_ff 1,024, 8 heads) with dropout, the default. The
tutorial's shape (4 layers, d_model 128, d_ff 512, 8 heads) is reachable by flags.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from scratch.config import check_shape, preset_fields

RESERVED = 4  # padding, unknown, begin and end of sequence: ids 0 to 3 (`scratch.translation.tokenizer`)
BYTE_PIECES = 256  # byte fallback reserves one piece per byte value
MIN_VOCAB_SIZE = RESERVED + BYTE_PIECES + 1
# The GNMT length penalty exponent of beam search (`scratch.translation.decoding`): GNMT's 0.6 left the presets' beam
# outputs shorter than the references on pt_en validation, 2.0 did not (docs/results.md, "The length penalty of beam
# search").
DEFAULT_LENGTH_PENALTY = 2.0

ARCHS = ("encoder-decoder", "decoder-only")


@dataclass
class TranslationConfig:
    """The shape of a translation model; `vocab_size` is the tokenizer's, reserved ids included. The defaults are
    the default preset's (`base`)."""

    vocab_size: int = 3000
    arch: str = "encoder-decoder"
    num_layers: int = 2
    d_model: int = 256
    num_heads: int = 8
    d_ff: int = 1024
    dropout: float = 0.1
    norm: str = "post"
    activation: str = "relu"
    tie_embeddings: bool = True

    def __post_init__(self) -> None:
        if self.arch not in ARCHS:
            raise ValueError(f"--arch must be one of {', '.join(ARCHS)}, got {self.arch!r}.")
        if self.vocab_size < MIN_VOCAB_SIZE:
            raise ValueError(
                f"--vocab-size {self.vocab_size} is smaller than the reserved ids and byte pieces; "
                f"use at least {MIN_VOCAB_SIZE}."
            )
        check_shape(self)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


PRESETS: dict[str, dict] = {
    "tiny": {"vocab_size": 300, "num_layers": 1, "d_model": 64, "num_heads": 4, "d_ff": 128, "dropout": 0.0},
    "small": {"vocab_size": 3000, "num_layers": 2, "d_model": 128, "num_heads": 4, "d_ff": 256, "dropout": 0.0},
    "base": {"vocab_size": 3000, "num_layers": 2, "d_model": 256, "num_heads": 8, "d_ff": 1024, "dropout": 0.1},
}
DEFAULT_PRESET = "base"


def config_from_preset(preset: str = DEFAULT_PRESET, **overrides) -> TranslationConfig:
    """The preset's shape with every override that is not None."""
    return TranslationConfig(**preset_fields(PRESETS, preset, overrides))
