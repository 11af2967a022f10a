"""`python -m scratch.translation.bench --run RUN`: scores a finished run on a split and times its decoding.

Translates the split through the run's `saved_model/` (as a user would), scores it with sacrebleu directly
(BLEU 13a cased, chrF++), overall and per domain, and reports sentences per second. Then it times cached
against uncached greedy decoding of the Keras model for outputs of exactly `--output-tokens` tokens (the
end id is masked out for this timing only, so both run every step).
"""

from __future__ import annotations

import json
import logging
import sys
import time
from dataclasses import dataclass, field

import tensorflow as tf

from core.cli import run_command
from core.data import SPLITS
from core.pairs import PairDataArguments, load_pairs
from core.translator import load
from scratch.translation import decoding
from scratch.translation.scores import score
from scratch.translation.tokenizer import EOS_ID, encode_source
from scratch.translation.train import load_trained

logger = logging.getLogger(__name__)


@dataclass
class BenchArguments:
    run: str = field(metadata={"help": "A finished translation run directory."})
    split: str = field(default="test", metadata={"help": "The split to translate and score."})
    data_dir: str | None = field(default=None, metadata={"help": "Folder of local task mirrors, for a named task."})
    beam: int = field(default=1, metadata={"help": "Beam width (1: greedy)."})
    batch_size: int = field(default=64, metadata={"help": "Sentences per decoding batch."})
    output_tokens: int = field(default=30, metadata={"help": "Output length of the cached/uncached timing."})
    timing_batch: int = field(default=32, metadata={"help": "Sentences in the cached/uncached timing batch."})
    repeats: int = field(default=3, metadata={"help": "Timed repetitions (the best is reported)."})

    def __post_init__(self) -> None:
        if self.split not in SPLITS:
            raise ValueError(f"--split must be one of {', '.join(SPLITS)}, got {self.split!r}.")
        for name in ("beam", "batch_size", "output_tokens", "timing_batch", "repeats"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(self, name)}.")


def score_split(args: BenchArguments) -> dict:
    translator = load(args.run)
    options = dict(translator.run["data"]["options"])
    if args.data_dir:
        options["data_dir"] = args.data_dir
    split = load_pairs(PairDataArguments(**options)).splits[args.split]
    translator.translate(split.sources[:8], beam=args.beam)  # traces the graph outside the timing
    started = time.perf_counter()
    hypotheses = translator.translate(split.sources, beam=args.beam, batch_size=args.batch_size)
    seconds = time.perf_counter() - started
    result = {"split": args.split, "n": len(split), "beam": args.beam, **score(hypotheses, split.targets)}
    result.update(seconds=seconds, sentences_per_second=len(split) / seconds)
    if split.domains is not None:
        result["per_domain"] = {}
        for domain in sorted(set(split.domains)):
            rows = [i for i, d in enumerate(split.domains) if d == domain]
            scores = score([hypotheses[i] for i in rows], [split.targets[i] for i in rows])
            result["per_domain"][domain] = {"n": len(rows), "bleu": scores["bleu"], "chrf": scores["chrf"]}
    return result, split


def time_cache(args: BenchArguments, sources: list[str]) -> dict:
    model, tokenizer, record = load_trained(args.run)
    if model.config.arch != "encoder-decoder":
        return {}
    bias = model.output_projection.bias
    bias.assign(tf.tensor_scatter_nd_update(bias, [[EOS_ID]], [-1e9]))  # every sentence runs all its steps
    max_length = record["data"]["options"]["max_length"]
    batch = encode_source(tokenizer, tf.constant(sources[: args.timing_batch]), max_length)
    spec = [tf.TensorSpec([None, None], tf.int32)]
    timings = {}
    for name, decode in (("cached", decoding.greedy_decode), ("uncached", decoding.greedy_decode_uncached)):
        function = tf.function(lambda s, decode=decode: decode(model, s, args.output_tokens), input_signature=spec)
        steps = int(function(batch).shape[1])  # trace; short sources cap the output below --output-tokens
        if steps < args.output_tokens:
            logger.warning(
                "The timing batch's sources allow only %d output tokens of the %d asked (--output-tokens); "
                "timed at %d.", steps, args.output_tokens, steps
            )  # fmt: skip
        best = float("inf")
        for _ in range(args.repeats):
            started = time.perf_counter()
            function(batch).numpy()
            best = min(best, time.perf_counter() - started)
        timings[f"{name}_seconds"] = best
    timings.update(
        batch=int(batch.shape[0]),
        output_tokens=steps,
        speedup=timings["uncached_seconds"] / timings["cached_seconds"],
    )
    return timings


def bench(args: BenchArguments) -> dict:
    """Scores and times the run; prints the results as JSON and returns them."""
    result, split = score_split(args)
    result["greedy_timing"] = time_cache(args, split.sources)
    print(json.dumps(result, indent=2))
    return result


def main(argv: list[str] | None = None) -> int:
    """A bad option, run or data mirror ends in one `error:` line and exit status 2 (`core.cli`)."""
    return run_command(argv, (BenchArguments,), bench)


if __name__ == "__main__":
    sys.exit(main())
