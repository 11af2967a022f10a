"""`python -m scratch.translation.bench --run RUN`: scores a finished run's decodings on a split and times them.

The run's weights are decoded by the current code (`TranslationModule`, what a run exports), so a run trained
before a change to decoding is measured with it. Three decodings by default: greedy, beam search of width
`--beam` and the same beam followed by minimum-Bayes-risk selection by chrF++ (`--mbr`), each scored with
sacrebleu directly (BLEU 13a cased, chrF++), overall and per domain, and timed in sentences per second. Then it
times cached against uncached greedy decoding of the Keras model for outputs of exactly `--output-tokens` tokens
(the end id is masked out for this timing only, so both run every step).
"""

from __future__ import annotations

import json
import logging
import sys
import time
from dataclasses import dataclass, field

import tensorflow as tf

from core.cli import Command
from core.data import SPLITS
from core.pairs import PairDataArguments, PairSplit, load_pairs
from core.translator import check_decoding, describe_decoding, translate_batches
from scratch.translation import decoding
from scratch.translation.export import TranslationModule
from scratch.translation.scores import score
from scratch.translation.tokenizer import EOS_ID, encode_source
from scratch.translation.train import load_trained

logger = logging.getLogger(__name__)


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


def scored(hypotheses: list[str], split: PairSplit) -> dict:
    """BLEU and chrF++ of `hypotheses` against the split's references, overall and per domain."""
    result = score(hypotheses, split.targets)
    if split.domains is not None:
        result["per_domain"] = {}
        for domain in sorted(set(split.domains)):
            rows = [i for i, d in enumerate(split.domains) if d == domain]
            scores = score([hypotheses[i] for i in rows], [split.targets[i] for i in rows])
            result["per_domain"][domain] = {"n": len(rows), "bleu": scores["bleu"], "chrf": scores["chrf"]}
    return result


def measure(module, sources: list[str], split: PairSplit, beam: int, mbr: bool, batch_size: int) -> dict:
    """One decoding of every source of the split: its scores and its speed (after a warm-up call that traces it)."""
    check_decoding(beam, mbr)
    translate_batches(module, sources[:8], beam, batch_size, mbr)
    started = time.perf_counter()
    hypotheses = translate_batches(module, sources, beam, batch_size, mbr)
    seconds = time.perf_counter() - started
    return {
        "beam": beam,
        "mbr": mbr,
        **scored(hypotheses, split),
        "seconds": seconds,
        "sentences_per_second": len(sources) / seconds,
    }


def score_split(args: BenchArguments, model, tokenizer, record) -> tuple[dict, PairSplit]:
    options = dict(record["data"]["options"])
    if args.data_dir:
        options["data_dir"] = args.data_dir
    split = load_pairs(PairDataArguments(**options)).splits[args.split]
    penalty = record["hyperparameters"].get("length_penalty", decoding.DEFAULT_LENGTH_PENALTY)
    module = TranslationModule(model, tokenizer.model_proto, options["max_length"], penalty)
    result = {"split": args.split, "n": len(split), "length_penalty": penalty, "decodings": {}}
    for beam, mbr in args.settings():
        name = describe_decoding(beam, mbr)
        found = measure(module, split.sources, split, beam, mbr, args.batch_size)
        result["decodings"][name] = found
        logger.info(
            "%s: BLEU %.2f, chrF++ %.2f, %.1f sentences/s", name, found["bleu"], found["chrf"], found["sentences_per_second"]
        )  # fmt: skip
    return result, split


def time_cache(args: BenchArguments, sources: list[str], model=None, tokenizer=None, record=None) -> dict:
    if model is None:
        model, tokenizer, record = load_trained(args.run)
    if model.config.arch != "encoder-decoder":
        return {}
    bias = model.output_projection.bias
    saved = tf.identity(bias)
    bias.assign(tf.tensor_scatter_nd_update(bias, [[EOS_ID]], [-1e9]))  # every sentence runs all its steps
    max_length = record["data"]["options"]["max_length"]
    batch = encode_source(tokenizer, tf.constant(sources[: args.timing_batch]), max_length)
    spec = [tf.TensorSpec([None, None], tf.int32)]
    timings = {}
    for name, decoded in (("cached", model), ("uncached", decoding.Uncached(model))):
        function = tf.function(
            lambda s, decoded=decoded: decoding.decode(decoded, s, args.output_tokens).best, input_signature=spec
        )
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
    bias.assign(saved)
    timings.update(
        batch=int(batch.shape[0]),
        output_tokens=steps,
        speedup=timings["uncached_seconds"] / timings["cached_seconds"],
    )
    return timings


def bench(args: BenchArguments) -> dict:
    """Scores and times the run; prints the results as JSON and returns them."""
    model, tokenizer, record = load_trained(args.run)
    result, split = score_split(args, model, tokenizer, record)
    result["greedy_timing"] = time_cache(args, split.sources, model, tokenizer, record)
    print(json.dumps(result, indent=2))
    return result


BENCH = Command(
    prog="python -m scratch.translation.bench",
    description="Translates a split with a finished translation run: BLEU, chrF++ and speed.",
    arguments=(BenchArguments,),
    work=bench,
)


def main(argv: list[str] | None = None) -> int:
    """A bad option, run or data mirror ends in one `error:` line and exit status 2 (`core.cli`)."""
    return BENCH.main(argv)


if __name__ == "__main__":
    sys.exit(main())
