"""`Kind`: what a kind of task decides, trains, validates and shows, and the registry of kinds (`core.kinds`).

Everything here is numpy; TensorFlow is imported only by the methods that build Keras objects (`loss`, `metrics`,
`activate`, `output_layer`), so the command line's `--help` stays fast.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from core.errors import UserError

EPSILON = 1e-7  # probabilities are clipped to [EPSILON, 1 - EPSILON] in a loss, as Keras does
DEFAULT = "single_label_classification"  # a run.json or a task that names no kind is single label


class Kind:
    """One kind of task. Subclasses set the class attributes and override what differs.

    Attributes:
        name: transformers' `problem_type`, as users type it and run.json stores it.
        title: how a sentence names it ("multi-label classification").
        short: how a list of tasks groups it ("multi-label").
        headline: the score that ranks models (a key of `validation` and of compare's scores).
        second: the score reported beside the headline everywhere.
        validation_fields: the scores run.json `validation` must hold.
        outputs: what a model gives, `probabilities` or `values` (the export's output name too).
        unit: what one label is called ("class", "label"); None where there are no labels.
        gold_title: how a table heads the gold answer.
        mode: the direction of `monitor`, the quantity early stopping watches and the best epoch is kept by.
    """

    name: ClassVar[str]
    title: ClassVar[str]
    short: ClassVar[str]
    headline: ClassVar[str]
    second: ClassVar[str]
    validation_fields: ClassVar[tuple[str, ...]]
    outputs: ClassVar[str] = "probabilities"
    unit: ClassVar[str | None] = "class"
    gold_title: ClassVar[str] = "Gold label"
    mode: ClassVar[str] = "max"

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))

    # --- what it is -------------------------------------------------------------------------------------------------

    @property
    def monitor(self) -> str:
        """The Keras logs key early stopping watches (in `mode`) and the training curves plot."""
        return f"val_{self.headline}"

    @property
    def gives_values(self) -> bool:
        """Whether a model of this kind answers with values (`predict_values`) rather than probabilities."""
        return self.outputs == "values"

    @property
    def scores(self) -> tuple[str, str]:
        """The two scores a comparison tracks, the headline first."""
        return self.headline, self.second

    def num_outputs(self, num_labels: int) -> int:
        """The numbers a model gives per example (transformers' `num_labels`): one per class or label."""
        return num_labels

    def describe_labels(self, labels: list[str]) -> str:
        """The kind with its labels, for a report's task line: "single-label classification (2 classes)"."""
        return f"{self.title} ({len(labels)} {self.unit}{'es' if self.unit == 'class' else 's'})"

    # --- training ---------------------------------------------------------------------------------------------------

    def loss(self, label_smoothing: float = 0.0) -> Any:
        """The Keras training loss of a model that outputs logits, against `targets`."""
        raise NotImplementedError

    def metrics(self, num_outputs: int) -> list:
        """The Keras metrics to compile with: the headline where one accumulates over batches."""
        return []

    def activate(self, logits: Any) -> Any:
        """The model's outputs (float32) from its logits (B, K)."""
        raise NotImplementedError

    def output_layer(self) -> Any:
        """The Keras layer that turns logits (B, K) into the model's outputs, named `outputs`."""
        raise NotImplementedError

    def check_class_weight(self, class_weight: str) -> None:
        """Refuses `--class-weight balanced` for a kind without exclusive classes to weigh."""
        if class_weight == "balanced":
            raise UserError(
                f"--class-weight balanced weighs single-label classes, but {self.why_no_class_weight} ({self.name}); "
                "drop --class-weight or pass --class-weight none."
            )

    why_no_class_weight: ClassVar[str] = "this kind has no exclusive classes"

    # --- data -------------------------------------------------------------------------------------------------------

    def targets(self, labels_column: list, num_labels: int) -> np.ndarray:
        """A split's targets from its `label` column: what the loss and the scores take."""
        raise NotImplementedError

    def check_train(self, targets: np.ndarray, labels: list[str]) -> str | None:
        """Why a train split with these targets cannot be learned (a sentence for the user), or None."""
        return None

    def data_record(self, train_targets: np.ndarray) -> dict[str, Any]:
        """What run.json `data` holds besides the fields every kind has."""
        return {}

    def stratify(self) -> bool:
        """Whether a split carved from train keeps the class proportions."""
        return False

    # --- deciding and validating -------------------------------------------------------------------------------------

    def decide(self, outputs: np.ndarray, thresholds: list[float] | None = None) -> np.ndarray:
        """The answers a model gives from its outputs: class ids (n,), 0/1 rows (n, L), or the values."""
        raise NotImplementedError

    def monitored_score(self, targets: np.ndarray, outputs: np.ndarray) -> float | None:
        """The watched validation score (`monitor`) computed from every validation output at once, where no Keras
        metric accumulated over batches gives it; None where the compiled metric does (the training loop then
        reads Keras' own `val_<headline>`)."""
        return None

    def choose_thresholds(self, outputs: np.ndarray, targets: np.ndarray) -> list[float] | None:
        """The decision thresholds chosen on validation (recorded in run.json `thresholds`); None where none."""
        return None

    def validation_loss(self, targets: np.ndarray, outputs: np.ndarray) -> float:
        """The mean loss of the outputs against the targets, as the training loss counts it."""
        raise NotImplementedError

    def validation_scores(
        self, targets: np.ndarray, outputs: np.ndarray, thresholds: list[float] | None = None
    ) -> dict[str, float]:
        """run.json's `validation`: `loss`, then the headline and the kind's other scores."""
        raise NotImplementedError

    def empty_outputs(self, num_labels: int) -> np.ndarray:
        """The outputs for no input at all, of the right shape."""
        return np.zeros((0, num_labels), np.float32)

    # --- comparison ---------------------------------------------------------------------------------------------------
    # How `compare` scores, tables and draws this kind. The scores through the suite's evaluate modules and the
    # reference rows import compare's modules when called, so importing a kind never loads them.

    table_columns: ClassVar[tuple[tuple[str, str, str], ...]] = ()  # the report table's other scores: (key, header,
    # format: a `str.format` pattern, or `pct`), beside the two scores
    table_note: ClassVar[str] = ""  # what the report's quality table adds for this kind
    figures: ClassVar[tuple[str, ...]] = ()  # the report's figures for this kind (`compare.render.figures.FIGURES`)
    decides_by_thresholds: ClassVar[bool] = False  # whether its decision takes per-label thresholds (run.json
    # `thresholds`), which the report shows
    per_class_note: ClassVar[str] = ""  # what the report's per-class (per-label) table adds
    disagreement_order: ClassVar[str] = ""  # how the report orders the examples the models disagree on

    def point_scores(self, gold: np.ndarray, pred: np.ndarray, num_labels: int) -> dict[str, float]:
        """The two `scores` of one set of decisions against gold (numpy only: the bootstrap calls it per resample)."""
        raise NotImplementedError

    def resampled_scores(
        self, gold: np.ndarray, pred: np.ndarray, idx: np.ndarray, num_labels: int
    ) -> dict[str, np.ndarray]:
        """The two `scores` on each row of resampled example indices `idx` (R, n): {score: (R,)}."""
        rows = [self.point_scores(gold[i], pred[i], num_labels) for i in idx]
        return {metric: np.array([row[metric] for row in rows]) for metric in self.scores}

    def paired_test(
        self, gold: np.ndarray, pred_a: np.ndarray, pred_b: np.ndarray, headline_diffs: np.ndarray
    ) -> dict[str, float]:
        """The significance test of two models' decisions on the same examples: here the paired bootstrap p-value of
        the headline's resampled differences (`bootstrap_p`)."""
        from compare.scoring.statistics import paired_p_value

        return {"bootstrap_p": paired_p_value(headline_diffs)}

    def quick_scores(self, decisions: np.ndarray, gold: np.ndarray, num_labels: int) -> dict[str, float]:
        """The two `scores` through the suite's evaluate modules (per seed, per curve point, per reference row)."""
        raise NotImplementedError

    def report_scores(
        self, outputs: np.ndarray, decisions: np.ndarray, gold: np.ndarray, labels: list[str], args: Any
    ) -> dict[str, Any]:
        """A model's quality entries of results.json (`compare.scoring.scores`), with bootstrap intervals of the
        two scores (`args`: `compare.scoring.statistics.StatisticsArguments`)."""
        raise NotImplementedError

    def reference_rows(self, train: tuple, validation: tuple, test: tuple, num_labels: int) -> dict[str, dict]:
        """The report's reference rows (`compare.scoring.baselines`), trained on `train` and scored on `test`, each
        split `(texts, second texts or None, gold)`, by name."""
        raise NotImplementedError

    def contested(self, outputs: list[np.ndarray], differ: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where models' answers differ: (example indices, how strongly each example (n,) is contested), from every
        model's outputs and whether any decision differs (n,)."""
        raise NotImplementedError

    def mistakes(self, outputs: np.ndarray, decisions: np.ndarray, gold: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One model's wrong answers: (example indices, how confident (or large) each example's answer is (n,))."""
        raise NotImplementedError

    def example(self, gold: Any, outputs: dict[str, Any], decisions: dict[str, Any], labels: list[str]) -> dict:
        """An error-analysis row's `gold` and per model answer (`models`) for one example."""
        raise NotImplementedError

    def prediction(self, labels: list[str], output: Any, decision: Any) -> dict:
        """One model's entry in a predictions.jsonl row: `{"label", "probs": {label: probability}}`."""
        return {
            "label": self.answer(labels, decision),
            "probs": {label: round(float(v), 6) for label, v in zip(labels, output)},
        }

    # --- app ---------------------------------------------------------------------------------------------------------

    label_panel: ClassVar[bool] = False  # whether the app shows an answer as a `gr.Label` (else as `panel` Markdown)

    def app_answers(
        self, outputs: np.ndarray, labels: list[str], thresholds: list[float] | None = None
    ) -> list[dict[str, Any]]:
        """The app's answer to each row of a model's outputs, as its `/classify` endpoint returns it: `{"value":
        number}` for a kind that gives values; else the decision in words (`label`, `decide` then `answer`), each
        label's probability (`probs`) and, where the run chose them, each label's threshold (`thresholds`), as
        predictions.jsonl names `value`, `label` and `probs`."""
        if self.gives_values:
            return [{"value": float(value)} for value in outputs]
        decided = self.decide(outputs, thresholds)
        chosen = {} if thresholds is None else {"thresholds": dict(zip(labels, map(float, thresholds)))}
        return [
            {"label": self.answer(labels, row_decided), "probs": dict(zip(labels, map(float, row))), **chosen}
            for row, row_decided in zip(outputs, decided)
        ]

    def decision(self, answer: dict[str, Any]) -> Any:
        """What an app answer decides, as predictions.jsonl holds it: a class, the chosen labels, the value."""
        return answer["value"] if self.gives_values else answer["label"]

    def answer(self, labels: list[str], decision: Any) -> Any:
        """One decision (a row of `decide`, or of a split's targets) in words, as predictions.jsonl holds it: a label
        name, a list of label names, or a number."""
        raise NotImplementedError

    def panel(self, answer: dict[str, Any], value_range: tuple[float, float] | None = None) -> Any:
        """What a model's panel on the page shows of its answer: the answer itself for a `gr.Label` (`label_panel`),
        else Markdown; `value_range` is the train split's smallest and largest value, where recorded."""
        raise NotImplementedError

    def invitation(self, them: str) -> str:
        """What the page's header invites a user to see the models do with the text(s) typed (`them`)."""
        raise NotImplementedError

    def answer_space(self, labels: list[str], value_range: tuple[float, float] | None = None) -> str:
        """What the models answer with, for the page's header: "classes: `negative`, `positive`"."""
        raise NotImplementedError

    # --- training ---------------------------------------------------------------------------------------------------

    smooths_labels: ClassVar[bool] = False  # whether `--label-smoothing` applies (exclusive classes only)
    reads_label_columns: ClassVar[bool] = False  # whether `--label-columns` (one 0/1 column per label) gives its data

    @property
    def has_labels(self) -> bool:
        """Whether the task names classes or labels (`labels`, `--labels-file`); a kind of values names none."""
        return self.unit is not None

    @property
    def watches_all_outputs(self) -> bool:
        """Whether `monitored_score` computes the watched score from every validation output (a callback then puts
        it in the epoch's logs), rather than a compiled Keras metric."""
        return type(self).monitored_score is not Kind.monitored_score

    def label_feature(self, labels: list[str]) -> Any:
        """The `datasets` feature of a split's `label` column (`core.labels`, `core.data`)."""
        raise NotImplementedError

    def map_labels(self, raw: dict, labels: list[str] | None, separator: str) -> tuple[dict[str, list], list[str]]:
        """Each raw split's labels in the kind's form (`core.labels`), and the label names."""
        raise NotImplementedError

    # --- distillation (scratch.distill) -----------------------------------------------------------------------------

    soft_targets_name: ClassVar[str] = "log_probabilities"  # run.json `distillation.soft_targets`

    def soft_targets(self, outputs: np.ndarray) -> np.ndarray:
        """A teacher's outputs as the distillation loss reads them, (n, D)."""
        raise NotImplementedError

    def teacher_loss(self, teacher: Any, logits: Any, temperature: float) -> Any:
        """The distillation loss's teacher term per row (B,), from soft targets (B, D) and the student's logits (B, D)."""
        raise NotImplementedError

    # --- predicting (core.classifier) -------------------------------------------------------------------------------

    def tidy_outputs(self, outputs: np.ndarray) -> np.ndarray:
        """A model's outputs as a classifier gives them, whatever computed them (TensorFlow, ONNX Runtime)."""
        return outputs

    # --- model card (core.card) -------------------------------------------------------------------------------------

    card_noun: ClassVar[str] = "text classifier"  # "A Transformer text classifier"
    card_purpose: ClassVar[str] = "to tell apart {n} classes"  # what a model is fine-tuned for, n labels

    def card_data(self, labels: list[str]) -> str:
        """The card's data line: what a row's label is."""
        return "Labels: " + ", ".join(f"`{label}`" for label in labels)

    def card_scores(self, validation: dict[str, float], labels: list[str], thresholds: list[float] | None) -> str:
        """The card's validation line."""
        return ", ".join(f"{name} {value:.4f}" for name, value in validation.items())

    def card_example(self, inputs: str, labels: list[str]) -> str:
        """The card's `model.<call>` line of loading through `core.classifier`, with the shape it gives."""
        return f"predict_proba({inputs})  # (1, {len(labels)}), rows sum to 1"

    # --- rare labels (the fine-tuned side's --focal-gamma) ----------------------------------------------------------

    why_no_focal_loss: ClassVar[str] = "its loss is not a sigmoid per label"

    def focal_loss(self, gamma: float) -> Any:
        """The focal training loss (Lin et al. 2017) on logits: each example's loss scaled by (1 - p)^gamma, so the
        many easy negatives of rare labels weigh less. Refused by a kind without a sigmoid per label."""
        raise UserError(
            f"--focal-gamma is for multi-label tasks, but {self.name} {self.why_no_focal_loss}; drop --focal-gamma."
        )

    # --- calibration (core.calibration) -------------------------------------------------------------------------------
    # Temperature scaling, fitted on validation after training (run.json `calibration`) and applied by
    # `predict_proba` and by every export. A kind that gives values has nothing to calibrate: its methods here give
    # None and leave outputs as they are.

    def fit_calibration(self, outputs: np.ndarray, targets: np.ndarray) -> dict[str, Any] | None:
        """run.json `calibration` fitted on validation outputs and targets (`core.calibration.record`), or None."""
        return None

    def calibrate(self, outputs: np.ndarray, temperatures: list[float] | None) -> np.ndarray:
        """The outputs (n, K) at the recorded temperatures (None: as they are)."""
        return outputs

    def calibrate_tensor(self, outputs: Any, temperatures: list[float] | None) -> Any:
        """`calibrate` on a float32 tensor, inside an exported graph."""
        return outputs

    def calibrate_onnx(self, path: Path, temperatures: list[float] | None) -> None:
        """Rewrites the ONNX model at `path` so that its outputs come out as `calibrate` gives them."""

    # --- label doubts (compare.scoring.label_issues) ------------------------------------------------------------------

    def label_doubts(
        self, gold: np.ndarray, outputs: list[np.ndarray], thresholds: list[float] | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """cleanlab's audit of a split's gold labels under several models' out-of-sample probabilities: (label
        quality (n,), lower more doubted; whether each is flagged as a likely error (n,); the suggested answer).
        Only kinds with labels (`has_labels`) are audited."""
        raise NotImplementedError

    def confidences(self, outputs: np.ndarray, gold: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """How sure each decision the calibration error counts is, and whether it was right: two arrays (n, m), one
        column per decision an example holds (`compare.scoring.calibration`)."""
        raise NotImplementedError

    # --- attribution (core.attribution) -----------------------------------------------------------------------------

    explained_scale: ClassVar[str] = "log-odds"  # what an attribution's scores add up to (a difference of)

    def explained_outputs(self, logits: Any) -> Any:
        """What an attribution explains, from the logits (B, K): each class's log-odds against the others,
        log(p / (1 - p)) = z_k - logsumexp(z_j, j != k), which, unlike the probability or its log, does not flatten
        where the model is sure."""
        import tensorflow as tf

        logits = tf.cast(logits, tf.float32)  # (B, K)
        others = tf.where(tf.eye(tf.shape(logits)[-1], dtype=tf.bool), -float("inf"), 0.0)  # (K, K)
        return logits - tf.reduce_logsumexp(logits[:, None, :] + others, axis=-1)  # (B, K)

    def attribution_targets(self, outputs: np.ndarray, thresholds: list[float] | None = None) -> list[int | None]:
        """The outputs an attribution explains by default for one input's outputs (K,): the class it chose."""
        return [int(np.argmax(outputs))]

    def confidence(self, answer: dict[str, Any]) -> float | None:
        """How sure an app answer (`app_answers`) is, for the app to abstain below a confidence the user sets; None
        where there is no probability to judge by (a value)."""
        return None

    def target_index(self, target: Any, labels: list[str]) -> int | None:
        """The output index of a label a caller names (its name, or its id); ValueError naming the labels otherwise."""
        if target in labels:
            return labels.index(target)
        if isinstance(target, int | np.integer) and 0 <= target < len(labels):
            return int(target)
        raise ValueError(f"target must be one of the labels {quoted(labels)} (or its id), got {target!r}.")


def number(value: float) -> str:
    """A value with four significant digits (3.421, 12.35, 1235), as the app shows it; its API gives it in full.

    >>> number(3.42137), number(1234.5), number(float("nan"))
    ('3.421', '1234', 'nan')
    """
    return f"{value:.4g}" if math.isfinite(value) else str(value)


def quoted(labels: list[str]) -> str:
    """Label names as the page lists them: "`negative`, `positive`"."""
    return ", ".join(f"`{label}`" for label in labels)


KINDS: dict[str, Kind] = {}


def register(kind: type[Kind]) -> type[Kind]:
    """Adds a kind to the registry under its `name` (a class decorator); the last registration of a name wins."""
    KINDS[kind.name] = kind()
    return kind


def get(name: str | None) -> Kind:
    """The kind called `name` (None: the default, single label); ValueError naming the known kinds otherwise."""
    try:
        return KINDS[name or DEFAULT]
    except KeyError:
        raise ValueError(f"problem_type must be one of {', '.join(KINDS)}, got {name!r}.") from None


def names() -> tuple[str, ...]:
    """The kinds' names, in registration order (the `--problem` choices)."""
    return tuple(KINDS)
