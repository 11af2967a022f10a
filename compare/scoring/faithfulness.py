"""How faithful each model's Integrated Gradients are (`core.attribution`): ERASER's comprehensiveness and
sufficiency (DeYoung et al. 2020), beside the same for words in a random order.

For one example with output f(x) for the explained label (the model's answer):

- comprehensiveness at k: f(x) - f(x without its top k% of words by attribution): high when the words the
  attribution ranks first are the ones the answer needs;
- sufficiency at k: f(x) - f(only the top k% of words, in their order): low when those words alone keep the answer;

each averaged over k in 1, 5, 10, 20 and 50% (AOPC; at least one word per k). A model whose outputs barely move
whatever is removed scores low on both, which says little about its attributions; so that two models compare, each
AOPC is also divided by that model's null difference f(x) - f(no words at all) (Carton et al. 2020's normalisation),
as a ratio of means over the sample. Edin et al. 2024 (Normalized AOPC) instead scale by each model's lowest and
highest AOPC over all word orders, found by beam search: many forward passes per example, which this cheaper
scale stands in for; the random order is the other reference point.

    >>> aopc([0.5, 0.4, 0.2, 0.1, 0.1, 0.0], 0.9)  # f(x) 0.9; f at each fraction, then with no words
    (0.64, 0.9)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.attribution import Attribution, explained, words_of

FRACTIONS = (0.01, 0.05, 0.10, 0.20, 0.50)
SEED = 0
HIGHLIGHTED = 3  # examples the report shows with every model's attributions
HIGHLIGHT_MAX_WORDS = 40


def removal_counts(n_words: int) -> list[int]:
    """How many words each fraction of `FRACTIONS` removes from (keeps of) an `n_words`-word input: at least one.

    >>> removal_counts(10), removal_counts(0)
    ([1, 1, 1, 2, 5], [0, 0, 0, 0, 0])
    """
    return [min(n_words, max(1, math.ceil(round(fraction * n_words, 6)))) if n_words else 0 for fraction in FRACTIONS]


def aopc(outputs: list[float], full: float) -> tuple[float, float]:
    """(The mean of full - outputs[k] over the fractions, the null difference full - outputs[-1]) for outputs at
    each fraction followed by the output with no words."""
    drops = [full - value for value in outputs[: len(FRACTIONS)]]
    return round(float(np.mean(drops)), 10), round(full - outputs[-1], 10)


@dataclass
class Perturbed:
    """The inputs one example's scores need: each fraction's input without the top words (comprehensiveness) and
    with only them (sufficiency), for the attribution's order and a random one; then the input with no words."""

    inputs: list[tuple[str, str | None]]


def split_words(text: str, pair: str | None) -> tuple[list[str], int]:
    """An input's words (the second text's after the first's, as `Attribution.words`) and how many are the first's."""
    first = [text[a:b] for a, b in words_of(text)]
    second = [] if pair is None else [pair[a:b] for a, b in words_of(pair)]
    return first + second, len(first)


def rebuild(words: list[str], first: int, keep: np.ndarray, pair: bool) -> tuple[str, str | None]:
    """The input made of the kept words, each text's in their order."""
    kept = [i for i in range(len(words)) if keep[i]]
    text = " ".join(words[i] for i in kept if i < first)
    return text, (" ".join(words[i] for i in kept if i >= first) if pair else None)


def perturbations(words: list[str], first: int, order: np.ndarray, pair: bool) -> list[tuple[str, str | None]]:
    """For each fraction: the input without the first words of `order`, then the inputs with only them."""
    without, only = [], []
    for count in removal_counts(len(words)):
        top = np.zeros(len(words), bool)
        top[order[:count]] = True
        without.append(rebuild(words, first, ~top, pair))
        only.append(rebuild(words, first, top, pair))
    return without + only


def example_scores(
    model: Any, text: str, pair: str | None, attribution: Attribution, rng: np.random.Generator
) -> dict[str, float]:
    """One example's AOPCs (comprehensiveness and sufficiency, by the attribution's order and a random one) and
    its null difference, all on the output the attribution explains."""
    words, first = split_words(text, pair)
    order = np.argsort(-np.asarray(attribution.scores), kind="stable")
    shuffled = rng.permutation(len(words))
    inputs = [(text, pair)]
    inputs += perturbations(words, first, order, pair is not None)
    inputs += perturbations(words, first, shuffled, pair is not None)
    inputs.append(rebuild(words, first, np.zeros(len(words), bool), pair is not None))
    outputs = target_outputs(model, inputs, attribution.target)
    full, n = outputs[0], len(FRACTIONS)
    empty = outputs[-1]
    scores = {}
    for name, start in (("ig", 1), ("random", 1 + 2 * n)):
        scores[f"comprehensiveness_{name}"], null = aopc([*outputs[start : start + n], empty], full)
        scores[f"sufficiency_{name}"], _ = aopc([*outputs[start + n : start + 2 * n], empty], full)
    scores["null_difference"] = null
    return scores


def target_outputs(model: Any, inputs: list[tuple[str, str | None]], target: str | None) -> list[float]:
    """The model's output for the explained label (its value, for a model of values) on each input."""
    texts = [text for text, _ in inputs]
    pairs = None if inputs[0][1] is None else [pair for _, pair in inputs]
    index = explained(model.kind).target_index(target, model.labels)
    if index is None:
        return model.predict_values(texts, pairs).tolist()
    return model.predict_proba(texts, pairs)[:, index].tolist()


def faithfulness(
    model: Any, texts: list[str], pairs: list[str] | None, attributions: list[Attribution], seed: int = SEED
) -> dict[str, Any]:
    """A model's faithfulness entry of results.json over explained examples: each AOPC's mean, raw and divided by
    the mean null difference, for Integrated Gradients and random words; and how often IG's comprehensiveness beats
    random words'."""
    rng = np.random.default_rng(seed)
    rows = [
        example_scores(model, text, None if pairs is None else pairs[i], attributions[i], rng)
        for i, text in enumerate(texts)
    ]
    mean = {key: float(np.mean([row[key] for row in rows])) for key in rows[0]}
    null = mean["null_difference"]
    entry: dict[str, Any] = {"examples": len(rows), "null_difference": round(null, 6)}
    for measure in ("comprehensiveness", "sufficiency"):
        for order in ("ig", "random"):
            value = mean[f"{measure}_{order}"]
            entry[f"{measure}_{order}"] = round(value, 6)
            entry[f"{measure}_{order}_normalised"] = round(value / null, 6) if null else None
    entry["ig_beats_random"] = round(
        float(np.mean([row["comprehensiveness_ig"] > row["comprehensiveness_random"] for row in rows])), 6
    )
    entry["mean_gap"] = round(float(np.mean([a.gap for a in attributions])), 6)
    return entry


def sample_indices(n: int, size: int, seed: int = SEED) -> list[int]:
    """A seeded sample of `size` row positions of a split of `n` rows, in order (all of them when it is smaller)."""
    if size >= n:
        return list(range(n))
    return sorted(np.random.default_rng(seed).choice(n, size, replace=False).tolist())


def add_faithfulness(results: dict, models: list, split: Any, size: int, loader: Any, progress: Any) -> None:
    """With `size` > 0, explains a seeded sample of `size` examples of the split with each model's primary run and
    adds each model's `faithfulness` entry and the report's `faithfulness` section to `results` (results.json)."""
    if size <= 0:
        return
    chosen = sample_indices(len(split.texts), size)
    texts = [split.texts[i] for i in chosen]
    pairs = None if split.pairs is None else [split.pairs[i] for i in chosen]
    explained, seconds = {}, {}
    for model in models:
        started = time.perf_counter()
        classifier = loader(model.primary.path, model.name)
        explained[model.name] = classifier.attribute(texts, pairs)
        entry = faithfulness(classifier, texts, pairs, explained[model.name])
        seconds[model.name] = round(time.perf_counter() - started, 1)
        results["models"][model.name]["faithfulness"] = {**entry, "seconds": seconds[model.name]}
        progress.stage(
            "faithfulness of %s on %d examples: comprehensiveness %.3f (random words %.3f), %.0f s",
            model.name,
            len(texts),
            entry["comprehensiveness_ig"],
            entry["comprehensiveness_random"],
            seconds[model.name],
        )
        del classifier
    results["faithfulness"] = {
        "examples": len(texts),
        "sample_seed": SEED,
        "fractions": list(FRACTIONS),
        "seconds": round(sum(seconds.values()), 1),
        "highlighted": highlighted(chosen, texts, pairs, explained),
    }


def highlighted(
    chosen: list[int], texts: list[str], pairs: list[str] | None, explained: dict[str, list[Attribution]]
) -> list[dict[str, Any]]:
    """A few explained examples (short ones first) with every model's words, scores and explained label."""
    short = [i for i in range(len(texts)) if len(next(iter(explained.values()))[i].words) <= HIGHLIGHT_MAX_WORDS]
    return [
        {
            "index": chosen[i],
            "text": texts[i],
            **({} if pairs is None else {"text_pair": pairs[i]}),
            "models": {
                name: {
                    "target": rows[i].target,
                    "words": rows[i].words,
                    "scores": [round(s, 6) for s in rows[i].scores],
                }
                for name, rows in explained.items()
            },
        }
        for i in short[:HIGHLIGHTED]
    ]
