"""Options of `compare report` (`compare.report.command`) and `compare predict` (`compare.predict`), free of
TensorFlow so that their `--help` answers at once."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from core.args import VERBOSE_HELP
from core.translator import check_decoding

INPUTS = (".csv", ".tsv", ".jsonl", ".json", ".parquet")
OUTPUTS = (".csv", ".jsonl")
SPLITS = ("test", "validation")
FAITHFULNESS_HELP = "Explain a seeded sample of N examples of the scored split with Integrated Gradients and score how faithful the explanations are (ERASER comprehensiveness and sufficiency beside random words); 0: off. Costs about a second per example per model on 2 CPU cores."


@dataclass
class ReportArguments:
    """Which runs to compare, on which split, and where the report goes."""

    runs: list[str] = field(metadata={"help": "Run directories; runs with the same name are seeds of one model."})
    output_dir: str = field(metadata={"help": "The report directory to write."})
    split: str = field(default="test", metadata={"help": "The labelled split to score.", "choices": SPLITS})
    names: list[str] | None = field(
        default=None, metadata={"help": "A name per run (default: its side); equal names group seeds of one model."}
    )
    latency_samples: int = field(default=50, metadata={"help": "Single-text predictions timed per model."})
    examples: int = field(default=25, metadata={"help": "Rows in each error-analysis table."})
    faithfulness: int = field(default=0, metadata={"help": FAITHFULNESS_HELP})
    verbose: bool = field(default=False, metadata={"help": VERBOSE_HELP})

    def __post_init__(self) -> None:
        for name in ("latency_samples", "examples"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(self, name)}.")
        if self.faithfulness < 0:
            raise ValueError(f"--faithfulness must be a number of examples (0: off), got {self.faithfulness}.")


@dataclass
class PredictArguments:
    """Which runs label which file, and where the labels go."""

    runs: list[str] = field(metadata={"help": "Run directories, or folders whose children are runs."})
    input: str = field(metadata={"help": f"The texts to label: {', '.join(INPUTS)}."})
    output: str = field(metadata={"help": f"Where the labelled rows go: {' or '.join(OUTPUTS)}."})
    text_column: list[str] = field(
        default_factory=lambda: ["text"], metadata={"help": "Text column(s); several are joined with a space."}
    )
    text_pair_column: str | None = field(
        default=None, metadata={"help": "Runs trained on pairs of texts: the column of each row's second text."}
    )
    names: list[str] | None = field(
        default=None, metadata={"help": "A name per run (default: its side; a translation run's directory name)."}
    )
    beam: int = field(default=1, metadata={"help": "Translation runs: beam width (1: greedy)."})
    mbr: bool = field(
        default=False,
        metadata={
            "help": "Translation runs: choose among the beam's hypotheses by chrF++ consensus (minimum Bayes risk)."
        },
    )
    verbose: bool = field(default=False, metadata={"help": VERBOSE_HELP})

    def __post_init__(self) -> None:
        if Path(self.input).suffix.lower() not in INPUTS:
            raise ValueError(f"--input {self.input}: unsupported file type; use one of {', '.join(INPUTS)}.")
        if Path(self.output).suffix.lower() not in OUTPUTS:
            raise ValueError(f"--output {self.output}: write .csv or .jsonl.")
        check_decoding(self.beam, self.mbr)
