"""Integrated Gradients (Sundararajan et al. 2017) over a model's token vectors, summed from word pieces to words.

For one input x (its token vectors) and a baseline b, the attribution of token i towards output f is

    IG_i = (x_i - b_i) . integral over a in [0, 1] of  df/dx_i (b + a (x - b)) da

where f is the explained label's log-odds, log(p / (1 - p)) (the value for regression; `ExplainedKind.outputs`:
unlike the probability or its log it does not flatten where the model is sure, which would leave nothing to
attribute), computed by the trapezoid rule on `steps` intervals, all the points of one input in one batch. Completeness says the
attributions add up to f(x) - f(b); what the trapezoid misses is each attribution's `gap`, which more steps shrink.

The baseline is the input with every word piece's token vector set to zero, the special tokens ([CLS], [SEP], the
separator) and the position (and segment) vectors kept: the same definition on both sides, so two models'
attributions compare, and one that needs no trained vector (the from-scratch model's padding row is never trained:
padding is masked). A side supplies the gradients along that path (`BaseClassifier.embedding_gradients`); this
module chooses the targets, integrates, and sums the pieces of each word.

Words are the text's whitespace-separated words (a pair's second text's after the first's); a word the model cut off
(past `max_length`, or from the middle under `--long-text head-tail`) scores 0. A model reading a text in windows
(`--long-text chunks`) is attributed window by window, its target chosen by the pooled answer, and a word read in
two windows scores the mean of its two scores. A text without words has nothing to attribute: no scores, and a gap of 0.

    >>> from core.classifier import load
    >>> model = load("reports/sst2/runs/finetune")                    # doctest: +SKIP
    >>> [explained] = model.attribute(["a gripping, funny film"])    # doctest: +SKIP
    >>> list(zip(explained.words, explained.scores)), explained.gap  # doctest: +SKIP
    ([('a', 0.01), ('gripping,', 0.21), ('funny', 0.33), ('film', 0.02)], 0.004)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from core.kinds import MultiLabel, Regression, SingleLabel
from core.kinds.base import quoted
from core.kinds.views import KindView, Views

if TYPE_CHECKING:
    from core.classifier import BaseClassifier

DEFAULT_STEPS = 32
MAX_ROWS = 64  # interpolation points per forward pass
WORD = re.compile(r"\S+")


class ExplainedKind(KindView):
    """What an attribution explains of a model of one kind, and which of its outputs by default."""

    def outputs(self, logits: Any) -> Any:
        """What an attribution explains, from the logits (B, K): each class's log-odds against the others,
        log(p / (1 - p)) = z_k - logsumexp(z_j, j != k), which, unlike the probability or its log, does not flatten
        where the model is sure."""
        import tensorflow as tf

        logits = tf.cast(logits, tf.float32)  # (B, K)
        others = tf.where(tf.eye(tf.shape(logits)[-1], dtype=tf.bool), -float("inf"), 0.0)  # (K, K)
        return logits - tf.reduce_logsumexp(logits[:, None, :] + others, axis=-1)  # (B, K)

    def targets(self, outputs: np.ndarray, thresholds: list[float] | None = None) -> list[int | None]:
        """The outputs an attribution explains by default for one input's outputs (K,): the class it chose."""
        return [int(np.argmax(outputs))]

    def target_index(self, target: Any, labels: list[str]) -> int | None:
        """The output index of a label a caller names (its name, or its id); ValueError naming the labels otherwise."""
        if target in labels:
            return labels.index(target)
        if isinstance(target, int | np.integer) and 0 <= target < len(labels):
            return int(target)
        raise ValueError(f"target must be one of the labels {quoted(labels)} (or its id), got {target!r}.")


VIEWS: Views[ExplainedKind] = Views("attribution", "core.attribution")
register = VIEWS.register
explained = VIEWS.of


@register(SingleLabel)
class ExplainedSingleLabel(ExplainedKind):
    pass


@register(MultiLabel)
class ExplainedMultiLabel(ExplainedKind):
    def outputs(self, logits: Any) -> Any:
        """Each label's log-odds, its logit (B, L)."""
        import tensorflow as tf

        return tf.cast(logits, tf.float32)

    def targets(self, outputs: np.ndarray, thresholds: list[float] | None = None) -> list[int | None]:
        """Each label chosen at its threshold (0.5 without), most probable first; the most probable when none is."""
        cut = np.full(len(outputs), 0.5) if thresholds is None else np.asarray(thresholds)
        chosen = [int(i) for i in np.argsort(-outputs, kind="stable") if outputs[i] >= cut[i]]
        return chosen or [int(np.argmax(outputs))]


@register(Regression)
class ExplainedRegression(ExplainedKind):
    def outputs(self, logits: Any) -> Any:
        """The value (B,)."""
        return self.kind.activate(logits)

    def targets(self, outputs: np.ndarray, thresholds: list[float] | None = None) -> list[int | None]:
        """The value (None: the model's one output)."""
        return [None]

    def target_index(self, target: Any, labels: list[str]) -> int | None:
        if target not in (None, "value"):
            raise ValueError(f"a regression model's attribution explains its value; pass no target, got {target!r}.")
        return None


@dataclass
class Attribution:
    """How much each word of one input moved one of the model's outputs from the baseline's.

    Attributes:
        words: the text's words in order (a pair's second text's after the first's).
        scores: one per word: its word pieces' Integrated Gradients summed.
        gap: the completeness gap, |sum(scores) - (output - baseline_output)| / |output - baseline_output|.
        target: the label attributed to (a class or label name); None for a model that gives values.
        output: what is explained at the input (`ExplainedKind.outputs`): the label's log-odds, or the value.
        baseline_output: the same at the baseline.
        by_label: every label attributed for this input (a multi-label model's chosen labels), this one included.
    """

    words: list[str]
    scores: list[float]
    gap: float
    target: str | None
    output: float
    baseline_output: float
    by_label: dict[str | None, Attribution] = field(default_factory=dict, repr=False)

    def as_dict(self) -> dict[str, Any]:
        """As the app's `/classify` endpoint returns it (`by_label` for a multi-label model's further labels)."""
        row = {"target": self.target, "words": self.words, "scores": self.scores, "gap": self.gap}
        if len(self.by_label) > 1:
            row["by_label"] = {
                label: dict(zip(("words", "scores", "gap"), (a.words, a.scores, a.gap)))
                for label, a in self.by_label.items()
            }
        return row


@dataclass
class PathGradients:
    """What a side computes along the straight path from the baseline to one input.

    Attributes:
        outputs: what is explained at each point (`ExplainedKind.outputs`), (S, K) or (S,) for a model of values;
            row 0 the baseline (a = 0),
            the last row the input (a = 1).
        gradients: for each target, the output's gradient with respect to the interpolated token vectors at each
            point, (targets, S, P, C); P the positions that move along the path (the word pieces).
        deltas: the input's token vectors minus the baseline's at those positions, (P, C).
        word_ids: each position's word, an index into the text's words then the second text's, (P,).
    """

    outputs: np.ndarray
    gradients: np.ndarray
    deltas: np.ndarray
    word_ids: np.ndarray


def words_of(text: str) -> list[tuple[int, int]]:
    """Each whitespace-separated word's (start, end) character offsets in `text`.

    >>> words_of("  a great\\tfilm ")
    [(2, 3), (4, 9), (10, 14)]
    """
    return [match.span() for match in WORD.finditer(text)]


def word_of_offset(spans: list[tuple[int, int]], start: int) -> int:
    """The index of the word whose span holds character `start` (a word piece's first character); -1 for none.

    >>> word_of_offset([(0, 1), (2, 7)], 4), word_of_offset([(0, 1), (2, 7)], 1)
    (1, -1)
    """
    for i, (first, end) in enumerate(spans):
        if first <= start < end:
            return i
    return -1


def trapezoid(steps: int) -> tuple[np.ndarray, np.ndarray]:
    """The path's points a (steps + 1,) and their trapezoid-rule weights, which sum to 1.

    >>> points, weights = trapezoid(4)
    >>> points.tolist(), weights.tolist()
    ([0.0, 0.25, 0.5, 0.75, 1.0], [0.125, 0.25, 0.25, 0.25, 0.125])
    """
    if steps < 1:
        raise ValueError(f"steps must be at least 1, got {steps}.")
    weights = np.full(steps + 1, 1.0 / steps)
    weights[[0, -1]] /= 2
    return np.linspace(0.0, 1.0, steps + 1), weights


def chosen_targets(model: BaseClassifier, outputs: np.ndarray, target: Any) -> list[int | None]:
    """The output indices to attribute for one input: the labels the caller names, else what the model chose."""
    if target is None:
        return explained(model.kind).targets(outputs, model.thresholds)
    named = target if isinstance(target, list | tuple) else [target]
    return [explained(model.kind).target_index(name, model.labels) for name in named]


def attribute(
    model: BaseClassifier,
    texts: list[str],
    text_pairs: list[str] | None = None,
    target: Any = None,
    steps: int = DEFAULT_STEPS,
) -> list[Attribution]:
    """Integrated Gradients of each text (pair) towards `target` (`BaseClassifier.attribute`)."""
    model.check_inputs(texts, text_pairs)
    points, weights = trapezoid(steps)
    results = []
    for i, text in enumerate(texts):
        pair = None if text_pairs is None else str(text_pairs[i])
        text = str(text)
        words = [text[a:b] for a, b in words_of(text)] + (
            [] if pair is None else [pair[a:b] for a, b in words_of(pair)]
        )
        windowed = model.reading.pools and pair is None
        inputs = (
            model.pooled_outputs([text])[0] if windowed else model.outputs([text], None if pair is None else [pair])[0]
        )
        targets = chosen_targets(model, np.asarray(inputs), target)
        spans = model.reading.spans(int(model.piece_counts([text])[0]), model.window) if windowed else [None]
        paths = [path_gradients(model, text, pair, points, targets, span) for span in spans]
        by_label = {}
        for t, index in enumerate(targets):
            label = None if index is None else model.labels[index]
            by_label[label] = integrated(paths, t, index, weights, words, label)
        first = next(iter(by_label.values()))
        first.by_label = by_label
        for other in by_label.values():
            other.by_label = by_label
        results.append(first)
    return results


def integrated(
    paths: list[PathGradients], t: int, index: int | None, weights: np.ndarray, words: list[str], label: str | None
) -> Attribution:
    """The attribution of target `t` (output `index`) from the path of each window the model read (one, unless it
    reads in chunks): each word's score in a window is the sum of its pieces' there, and a word read in several
    windows scores their mean; the gap is the worst window's, the outputs the windows' mean."""
    totals, counts, gaps, ends = np.zeros(len(words)), np.zeros(len(words)), [], []
    for path in paths:
        along = path.outputs if index is None else path.outputs[:, index]  # (S,)
        tokens = np.einsum("s,spc,pc->p", weights, path.gradients[t], path.deltas)  # (P,)
        scores = np.zeros(len(words))
        kept = path.word_ids >= 0
        np.add.at(scores, path.word_ids[kept], tokens[kept])
        totals += scores
        counts[np.unique(path.word_ids[kept])] += 1
        gaps.append(completeness_gap(scores, along[-1], along[0]))
        ends.append((float(along[-1]), float(along[0])))
    scores = totals / np.maximum(counts, 1)
    output, baseline = np.mean(ends, axis=0)
    return Attribution(words, scores.tolist(), max(gaps) if words else 0.0, label, float(output), float(baseline))


def path_gradients(
    model: BaseClassifier,
    text: str,
    pair: str | None,
    points: np.ndarray,
    targets: list[int | None],
    span: tuple[int, int] | None = None,
) -> PathGradients:
    """The side's `embedding_gradients` over the path's points in batches of at most `MAX_ROWS`; with `span`, over
    that window of the text's pieces."""
    window = {} if span is None else {"span": span}
    parts = [
        model.embedding_gradients(text, pair, points[start : start + MAX_ROWS], targets, **window)
        for start in range(0, len(points), MAX_ROWS)
    ]
    return PathGradients(
        np.concatenate([part.outputs for part in parts]),
        np.concatenate([part.gradients for part in parts], axis=1),
        parts[0].deltas,
        parts[0].word_ids,
    )


def completeness_gap(scores: np.ndarray, output: float, baseline_output: float) -> float:
    """|sum(scores) - (output - baseline_output)| relative to |output - baseline_output| (0 when both are 0).

    >>> completeness_gap(np.array([0.25, 0.25]), 0.75, 0.25), completeness_gap(np.array([0.25]), 0.75, 0.25)
    (0.0, 0.5)
    """
    difference = output - baseline_output
    missed = abs(float(np.sum(scores)) - difference)
    if missed == 0.0:
        return 0.0
    return float(missed / abs(difference)) if difference != 0 else float("inf")
