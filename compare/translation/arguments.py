"""Options of `compare run` on a translation task: where the runs go, and which variants of the translator train.

Profiles are budgets, as for classification (`compare.run.profiles`), declared by the translation side in
`core.sides`: `quick` trains the `small` preset for its epochs within 1,500 optimizer steps; `full` trains the
`base` preset with its own epoch budget and early stopping.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from core.sides import PROFILES, get

SIDE = "translation"  # the side that trains every variant (core.sides)
DECODER_ONLY = "scratch-decoder-only"
DISTILLED = "scratch-distilled"
ENCODER_DECODER = "scratch"


@dataclass
class TranslationRunArguments:
    """Where the runs and the report go, and how the from-scratch translator is trained."""

    output_dir: str = field(metadata={"help": "Output directory: the report, and the runs in its runs/ folder."})
    profile: str = field(default="quick", metadata={"help": f"Training budget: {' or '.join(PROFILES)}."})
    retrain: bool = field(default=False, metadata={"help": "Train again even when matching runs exist."})
    decoder_only: bool = field(
        default=False,
        metadata={"help": f"Also train the decoder-only (GPT-style) variant into runs/{DECODER_ONLY} and report it."},
    )
    distill: bool = field(
        default=False,
        metadata={
            "help": f"Also train the from-scratch translator on Bergamot's translations of the train sources "
            f"(python -m scratch --teacher bergamot; pt -> en data only) into runs/{DISTILLED} and report it."
        },
    )
    scratch_args: str = field(
        default="", metadata={"help": 'Extra flags for python -m scratch, e.g. "--preset tiny --epochs 2".'}
    )

    def __post_init__(self) -> None:
        if self.profile not in PROFILES:
            raise ValueError(f"Unknown profile {self.profile!r}; choose one of {', '.join(PROFILES)}.")
        try:
            shlex.split(self.scratch_args)
        except ValueError as error:
            raise ValueError(f"--scratch-args cannot be split into flags: {error}.") from None

    def variants(self) -> dict[str, list[str]]:
        """Model name -> the flags of its `python -m scratch` command (profile's, then the user's)."""
        flags = [*get(SIDE).profiles[self.profile].side_flags(), *shlex.split(self.scratch_args)]
        found = {ENCODER_DECODER: flags}
        if self.decoder_only:
            found[DECODER_ONLY] = [*flags, "--arch", "decoder-only"]
        if self.distill:
            found[DISTILLED] = [*flags, "--teacher", "bergamot"]
        return found
