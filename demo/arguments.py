"""The options of `python app.py` (what the demo serves and where it listens), free of Gradio and TensorFlow so
that `--help` and a refused option answer at once."""

from __future__ import annotations

from dataclasses import dataclass, field

from core.args import VERBOSE_HELP

DEFAULT_MAX_CHARS = 100_000  # a long review or article; a run that reads in windows (--long-text chunks) reads it whole


@dataclass
class AppArguments:
    """What the demo serves and where it listens."""

    report: str | None = field(
        default=None,
        metadata={
            "help": "A report directory (results.json, predictions.jsonl, figures, runs/). Default: the "
            "newest report under reports/."
        },
    )
    runs: list[str] | None = field(
        default=None, metadata={"help": "Run directories, or folders whose children are runs (overrides the report's)."}
    )
    host: str = field(
        default="127.0.0.1", metadata={"help": "Address to bind; 0.0.0.0 exposes the demo to your network."}
    )
    port: int = field(default=7860, metadata={"help": "Port to listen on."})
    share: bool = field(default=False, metadata={"help": "Also open a public Gradio share link (off by default)."})
    max_chars: int = field(default=DEFAULT_MAX_CHARS, metadata={"help": "Longest text accepted, in characters."})
    verbose: bool = field(default=False, metadata={"help": VERBOSE_HELP})

    def __post_init__(self) -> None:
        if not 0 < self.port < 65536:
            raise ValueError(f"--port must be between 1 and 65535, got {self.port}.")
        if self.max_chars < 1:
            raise ValueError(f"--max-chars must be at least 1, got {self.max_chars}.")
        if not self.host.strip():
            raise ValueError("--host must not be empty; use 127.0.0.1 to serve this machine only.")
