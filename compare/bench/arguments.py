"""Options of `compare bench` (`compare.bench.command`) and its measurement profiles, free of TensorFlow so that its
`--help` answers at once."""

from __future__ import annotations

from dataclasses import dataclass, field

from core.args import VERBOSE_HELP


@dataclass(frozen=True)
class BenchProfile:
    """How long each stage measures (each side's training steps per round: its `core.sides` `bench.steps`)."""

    rounds: int
    latency_samples: int
    requests: int = 200
    clients: int = 8


BENCH_PROFILES = {
    "quick": BenchProfile(rounds=3, latency_samples=200),
    "full": BenchProfile(rounds=6, latency_samples=200),
}


@dataclass
class BenchArguments:
    """Where the measurements go, how long they take, and which runs prediction and the app use."""

    output_dir: str = field(metadata={"help": "Directory for bench.json, bench.md and the stages' logs."})
    profile: str = field(
        default="quick", metadata={"help": "How long each stage measures.", "choices": tuple(BENCH_PROFILES)}
    )
    report: str | None = field(default=None, metadata={"help": "A report directory whose runs to measure."})
    runs: list[str] | None = field(default=None, metadata={"help": "Run directories (one per side) to measure."})
    verbose: bool = field(default=False, metadata={"help": VERBOSE_HELP})

    def __post_init__(self) -> None:
        if self.profile not in BENCH_PROFILES:
            raise ValueError(f"Unknown --profile {self.profile!r}; choose one of {', '.join(BENCH_PROFILES)}.")
        if self.report and self.runs:
            raise ValueError("Give --report or --runs, not both.")
