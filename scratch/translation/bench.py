"""`python -m scratch.translation.bench --run RUN`: scores a finished run's decodings on a split and times them.

The run's weights are decoded by the current code (`TranslationModule`, what a run exports), so a run trained
before a change to decoding is measured with it. Three decodings by default: greedy, beam search of width
`--beam` and the same beam followed by minimum-Bayes-risk selection by chrF++ (`--mbr`), each scored with
sacrebleu directly (BLEU 13a cased, chrF++), overall and per domain, and timed in sentences per second. Then it
times cached against uncached greedy decoding of the Keras model for outputs of exactly `--output-tokens` tokens
(the end id is masked out for this timing only, so both run every step). The results are printed as JSON, or
with `--output-file FILE` written there (atomically) with one line per decoding on the terminal.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from core.cli import Command
from core.tasks import SPLITS

# The work (`scratch.translation.measure`) imports TensorFlow: it loads only once the command line is accepted.


@dataclass
class BenchArguments:
    run: str = field(metadata={"help": "A finished translation run directory."})
    split: str = field(default="test", metadata={"help": "The split to translate and score."})
    data_dir: str | None = field(default=None, metadata={"help": "Folder of local task mirrors, for a named task."})
    beam: int = field(default=4, metadata={"help": "Beam width of the beam-search decodings (1: greedy only)."})
    decodings: list[str] = field(
        default_factory=lambda: ["greedy", "beam", "mbr"],
        metadata={"help": "Which to measure: greedy, beam (width --beam), mbr (the beam, then MBR by chrF++)."},
    )
    batch_size: int = field(default=64, metadata={"help": "Sentences per decoding batch."})
    output_tokens: int = field(default=30, metadata={"help": "Output length of the cached/uncached timing."})
    timing_batch: int = field(default=32, metadata={"help": "Sentences in the cached/uncached timing batch."})
    repeats: int = field(default=3, metadata={"help": "Timed repetitions (the best is reported)."})
    output_file: str | None = field(
        default=None, metadata={"help": "Write the results' JSON to this file and print a summary (default: print it)."}
    )

    def __post_init__(self) -> None:
        if self.split not in SPLITS:
            raise ValueError(f"--split must be one of {', '.join(SPLITS)}, got {self.split!r}.")
        for name in ("beam", "batch_size", "output_tokens", "timing_batch", "repeats"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(self, name)}.")
        unknown = [d for d in self.decodings if d not in DECODINGS]
        if unknown or not self.decodings:
            raise ValueError(f"--decodings takes {', '.join(DECODINGS)}; got {' '.join(self.decodings) or 'none'}.")
        if self.beam == 1 and set(self.decodings) & {"beam", "mbr"}:
            raise ValueError("--beam 1 is greedy decoding: measure --decodings greedy, or give a beam of 2 or more.")

    def settings(self) -> list[tuple[int, bool]]:
        """(beam, mbr) of each decoding asked for, in order."""
        return [DECODINGS[name](self.beam) for name in self.decodings]


DECODINGS = {"greedy": lambda beam: (1, False), "beam": lambda beam: (beam, False), "mbr": lambda beam: (beam, True)}


BENCH = Command(
    prog="python -m scratch.translation.bench",
    description="Translates a split with a finished translation run: BLEU, chrF++ and speed.",
    arguments=(BenchArguments,),
    work="scratch.translation.measure:bench",
)


def main(argv: list[str] | None = None) -> int:
    """A bad option, run or data mirror ends in one `error:` line and exit status 2 (`core.cli`)."""
    return BENCH.main(argv)


if __name__ == "__main__":
    sys.exit(main())
