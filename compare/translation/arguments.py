"""Options of `compare run` on a translation task: where the runs go, and which variants of the translator train.

Profiles are budgets, as for classification (`compare.run.profiles`), declared by the from-scratch side under the
translation task in `core.sides`: `quick` trains the `small` preset for its epochs within 1,500 optimizer steps;
`full` trains the `base` preset with its own epoch budget and early stopping. The translator's extra flags are
given as for classification, `--side-args scratch="FLAGS"` or `--scratch-args "FLAGS"` (`compare.run.arguments`); a
side the task does not train is refused by name. Every variant's flags are checked by `python -m scratch`'s own
parser before any variant trains.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from compare.run.arguments import OUTPUT_DIR_HELP, PROFILE_HELP, RETRAIN_HELP, check_command_flags, with_side_flags
from compare.run.profiles import give_way
from core import sides
from core.args import VERBOSE_HELP
from core.sides import PROFILES
from core.task_kinds import TRANSLATION
from core.translator import DEFAULT_BEAM, DEFAULT_MBR

TRANSLATOR = sides.get(sides.FROM_SCRATCH, TRANSLATION)  # the side that trains every variant, under translation
ENCODER_DECODER = TRANSLATOR.command  # the runs are named by the command that trains them: runs/scratch, ...
DECODER_ONLY = f"{ENCODER_DECODER}-decoder-only"
DISTILLED = f"{ENCODER_DECODER}-distilled"


@dataclass
class _TranslationRunArguments:
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
    verbose: bool = field(default=False, metadata={"help": VERBOSE_HELP})

    def __post_init__(self) -> None:
        if self.profile not in PROFILES:
            raise ValueError(f"Unknown profile {self.profile!r}; choose one of {', '.join(PROFILES)}.")
        self.extra, self.spelling = self.given_side_flags(TRANSLATION)
        origin = f"the {self.profile} profile's {shlex.join(self.profile_flags())}"
        if TRANSLATOR.name in self.extra:
            origin += f", then {self.spelling[TRANSLATOR.name]}"
        for name, flags in self.variants().items():
            check_command_flags(TRANSLATOR, flags, f"{origin} for {name}")

    def profile_flags(self) -> list[str]:
        """The flags the profile gives `python -m scratch` on a translation task (`core.sides`)."""
        return TRANSLATOR.profiles[self.profile].side_flags()

    def variants(self) -> dict[str, list[str]]:
        """Model name -> the flags of its `python -m scratch` command (profile's, moved to fit the user's step
        bounds, then the user's)."""
        user = self.extra.get(TRANSLATOR.name, [])
        flags = [*give_way(self.profile_flags(), user), *user]
        found = {ENCODER_DECODER: flags}
        if self.decoder_only:
            found[DECODER_ONLY] = [*flags, "--arch", "decoder-only"]
        if self.distill:
            found[DISTILLED] = [*flags, "--teacher", "bergamot"]
        return found


TranslationRunArguments = with_side_flags(_TranslationRunArguments)


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
