"""Options of `compare run` on a translation task: where the runs go, and which variants of the translator train.

Profiles are budgets, as for classification (`compare.run.profiles`), declared by the translation side in
`core.sides`: `quick` trains the `small` preset for its epochs within 1,500 optimizer steps; `full` trains the
`base` preset with its own epoch budget and early stopping. Every variant's flags are checked by
`python -m scratch`'s own parser before any variant trains.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from compare.run.arguments import (
    OUTPUT_DIR_HELP,
    PROFILE_HELP,
    RETRAIN_HELP,
    SCRATCH_ARGS_HELP,
    check_command_flags,
    refuse_data_flags,
    split_flags,
)
from compare.run.profiles import give_way
from core.args import VERBOSE_HELP, PairDataArguments
from core.sides import PROFILES, SIDES, get
from core.task_kinds import TRANSLATION
from core.translator import DEFAULT_BEAM, DEFAULT_MBR

SIDE = next(side.name for side in SIDES.values() if side.task is TRANSLATION)  # trains every variant
ENCODER_DECODER = get(SIDE).command  # the runs are named by the command that trains them: runs/scratch, ...
DECODER_ONLY = f"{ENCODER_DECODER}-decoder-only"
DISTILLED = f"{ENCODER_DECODER}-distilled"


@dataclass
class TranslationRunArguments:
    """Where the runs and the report go, and how the from-scratch translator is trained."""

    _argument_group_name = "comparison options"

    output_dir: str = field(metadata={"help": OUTPUT_DIR_HELP})
    profile: str = field(default="quick", metadata={"help": PROFILE_HELP, "choices": tuple(sorted(PROFILES))})
    retrain: bool = field(default=False, metadata={"help": RETRAIN_HELP, "aliases": ["--overwrite"]})
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
    scratch_args: str = field(default="", metadata={"help": SCRATCH_ARGS_HELP})
    verbose: bool = field(default=False, metadata={"help": VERBOSE_HELP})

    def __post_init__(self) -> None:
        if self.profile not in PROFILES:
            raise ValueError(f"Unknown profile {self.profile!r}; choose one of {', '.join(PROFILES)}.")
        refuse_data_flags("--scratch-args", split_flags("--scratch-args", self.scratch_args), PairDataArguments)
        origin = f"the {self.profile} profile's {shlex.join(self.profile_flags())}"
        if self.scratch_args:
            origin += ", then --scratch-args"
        for name, flags in self.variants().items():
            check_command_flags(SIDE, flags, f"{origin} for {name}")

    def profile_flags(self) -> list[str]:
        """The flags the profile gives `python -m scratch` (`core.sides`)."""
        return get(SIDE).profiles[self.profile].side_flags()

    def variants(self) -> dict[str, list[str]]:
        """Model name -> the flags of its `python -m scratch` command (profile's, moved to fit the user's step
        bounds, then the user's)."""
        user = shlex.split(self.scratch_args)
        flags = [*give_way(self.profile_flags(), user), *user]
        found = {ENCODER_DECODER: flags}
        if self.decoder_only:
            found[DECODER_ONLY] = [*flags, "--arch", "decoder-only"]
        if self.distill:
            found[DISTILLED] = [*flags, "--teacher", "bergamot"]
        return found


@dataclass
class TranslationReportArguments:
    """How the systems are timed and what the report shows besides the scores."""

    _argument_group_name = "report options"

    beam: int = field(
        default=DEFAULT_BEAM,
        metadata={
            "help": "Beam width the scored translations are decoded with (1: greedy; decoder-only runs: greedy)."
        },
    )
    mbr: bool = field(
        default=DEFAULT_MBR,
        metadata={
            "help": "Choose each translation among the beam's hypotheses by their chrF++ consensus (minimum Bayes "
            "risk) instead of the most likely. Nothing to choose with --beam 1."
        },
    )
    latency_samples: int = field(default=50, metadata={"help": "Single sentences translated one by one and timed."})
    examples: int = field(default=15, metadata={"help": "Rows of the table of sentences where systems differ most."})
    language_pair: str | None = field(
        default=None,
        metadata={
            "help": "The data's pair as src-tgt (e.g. pt-en); the bergamot reference runs only for pt-en. Default: "
            "pt-en for --task pt_en, else the column names when they are two-letter language codes."
        },
    )

    def __post_init__(self) -> None:
        for name in ("beam", "latency_samples", "examples"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(self, name)}.")
