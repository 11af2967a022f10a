"""The work of `python -m scratch.translation.bench` (`scratch.translation.bench`, which holds its options): a
finished run's decodings of a split scored and timed, and cached against uncached greedy decoding."""

from __future__ import annotations

import json
import logging
import time

import tensorflow as tf

from core.pairs import PairDataArguments, PairSplit, load_pairs
from core.rundir import write_json
from core.translator import check_decoding, describe_decoding, translate_batches
from scratch.translation import decoding
from scratch.translation.bench import BenchArguments
from scratch.translation.export import TranslationModule
from scratch.translation.scores import score
from scratch.translation.tokenizer import EOS_ID, encode_source
from scratch.translation.train import load_trained

logger = logging.getLogger(__name__)


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
    options = dict(record.data.options)
    if args.data_dir:
        options["data_dir"] = args.data_dir
    split = load_pairs(PairDataArguments(**options)).splits[args.split]
    penalty = record.hyperparameters.get("length_penalty", decoding.DEFAULT_LENGTH_PENALTY)
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
    max_length = record.data.options["max_length"]
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
    """Scores and times the run; prints the results as JSON (or writes them to `--output-file` and prints a line per
    decoding) and returns them."""
    model, tokenizer, record = load_trained(args.run)
    result, split = score_split(args, model, tokenizer, record)
    result["greedy_timing"] = time_cache(args, split.sources, model, tokenizer, record)
    if args.output_file is None:
        print(json.dumps(result, indent=2))
        return result
    write_json(args.output_file, result)
    for name, found in result["decodings"].items():
        print(
            f"{name}: BLEU {found['bleu']:.2f}, chrF++ {found['chrf']:.2f}, {found['sentences_per_second']:.1f} sentences/s"
        )
    timing = result["greedy_timing"]
    print(f"cached greedy decoding {timing['speedup']:.1f}x as fast as uncached; all results in {args.output_file}")
    return result
