"""`python -m compare.bench.predict --run DIR --texts-file F`: one Classifier's prediction speed, in its own process.

Loads the run through `core.classifier.load` (never training code), times single-text predictions (p50/p95)
and batched prediction of every text, and prints one JSON object with the process's peak resident memory.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from compare.scoring.timing import predict_split, single_text_latency
from core.classifier import load
from core.parsing import parse_args
from core.throughput import emit


@dataclass
class PredictBenchArguments:
    run: str = field(metadata={"help": "The run directory to load."})
    texts_file: str = field(metadata={"help": "A JSON list of texts to predict."})
    samples: int = field(default=50, metadata={"help": "Single-text predictions timed."})


def measure(run_dir: str | Path, texts: list[str], samples: int) -> dict:
    classifier = load(run_dir)
    latency = single_text_latency(classifier, texts, samples)
    _, batch_per_s = predict_split(classifier, texts)
    return {
        "side": classifier.side,
        "run": str(run_dir),
        "texts": len(texts),
        "samples": samples,
        "p50_ms": latency["latency_p50_ms"],
        "p95_ms": latency["latency_p95_ms"],
        "batch_per_s": batch_per_s,
    }


def main(argv: list[str] | None = None) -> int:
    (args,) = parse_args((PredictBenchArguments,), argv)
    texts = json.loads(Path(args.texts_file).read_text(encoding="utf-8"))
    emit(measure(args.run, texts, args.samples))
    return 0


if __name__ == "__main__":
    sys.exit(main())
