"""`Kind`: the model's side of a kind of task (what it trains on, outputs, decides and validates), and the registry
of kinds (`core.kinds`).

Everything here is numpy; TensorFlow is imported only by the methods that build Keras objects (`loss`, `metrics`,
`activate`, `output_layer`), so the command line's `--help` stays fast.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from core.calibration import NONE, Calibration
from core.errors import UserError

EPSILON = 1e-7  # probabilities are clipped to [EPSILON, 1 - EPSILON] in a loss, as Keras does
DEFAULT = "single_label_classification"  # a run.json or a task that names no kind is single label


class Kind:
    """One kind of task, as the model sees it: its targets from the labels, its outputs, loss, decisions, validation
    scores and calibration. Subclasses set the class attributes and override what differs. How another layer treats a
    kind is that layer's view of it (`core.kinds.views`).

    Attributes:
        name: transformers' `problem_type`, as users type it and run.json stores it.
        title: how a sentence names it ("multi-label classification").
        short: how a list of tasks groups it ("multi-label").
        headline: the score that ranks models (a key of `validation` and of compare's scores).
        second: the score reported beside the headline everywhere.
        validation_fields: the scores run.json `validation` must hold.
        outputs: what a model gives, `probabilities` or `values` (the export's output name too).
        unit: what one label is called ("class", "label"); None where there are no labels.
        mode: the direction of `monitor`, the quantity early stopping watches and the best epoch is kept by.
        calibration: how its outputs are temperature-scaled (`core.calibration`): fitted on validation after training
            (run.json `calibration`) and applied by `predict_proba` and by every export.
        smooths_labels: whether `--label-smoothing` applies (exclusive classes only).
        reads_label_columns: whether `--label-columns` (one 0/1 column per label) gives its data.

    Derived for each subclass from the above:
        monitor: the Keras logs key early stopping watches (in `mode`) and the training curves plot.
        scores: the two scores a comparison tracks, the headline first.
        gives_values: whether a model of this kind answers with values (`predict_values`) rather than probabilities.
        has_labels: whether the task names classes or labels (`labels`, `--labels-file`); a kind of values names none.
        watches_all_outputs: whether `monitored_score` computes the watched score from every validation output (a
            callback then puts it in the epoch's logs), rather than a compiled Keras metric.
    """

    name: ClassVar[str]
    title: ClassVar[str]
    short: ClassVar[str]
    headline: ClassVar[str]
    second: ClassVar[str]
    validation_fields: ClassVar[tuple[str, ...]]
    outputs: ClassVar[str] = "probabilities"
    unit: ClassVar[str | None] = "class"
    mode: ClassVar[str] = "max"
    calibration: ClassVar[Calibration] = NONE
    smooths_labels: ClassVar[bool] = False
    reads_label_columns: ClassVar[bool] = False
    why_no_class_weight: ClassVar[str] = "this kind has no exclusive classes"
    why_no_focal_loss: ClassVar[str] = "its loss is not a sigmoid per label"

    monitor: ClassVar[str]
    scores: ClassVar[tuple[str, str]]
    gives_values: ClassVar[bool]
    has_labels: ClassVar[bool]
    watches_all_outputs: ClassVar[bool]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.monitor = f"val_{cls.headline}"
        cls.scores = (cls.headline, cls.second)
        cls.gives_values = cls.outputs == "values"
        cls.has_labels = cls.unit is not None
        cls.watches_all_outputs = cls.monitored_score is not Kind.monitored_score

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))

    # --- outputs and loss ---------------------------------------------------------------------------------------------

    def num_outputs(self, num_labels: int) -> int:
        """The numbers a model gives per example (transformers' `num_labels`): one per class or label."""
        return num_labels

    def loss(self, label_smoothing: float = 0.0) -> Any:
        """The Keras training loss of a model that outputs logits, against `targets`."""
        raise NotImplementedError

    def focal_loss(self, gamma: float) -> Any:
        """The focal training loss (Lin et al. 2017) on logits: each example's loss scaled by (1 - p)^gamma, so the
        many easy negatives of rare labels weigh less (the fine-tuned side's `--focal-gamma`). Refused by a kind
        without a sigmoid per label."""
        raise UserError(
            f"--focal-gamma is for multi-label tasks, but {self.name} {self.why_no_focal_loss}; drop --focal-gamma."
        )

    def check_class_weight(self, class_weight: str) -> None:
        """Refuses `--class-weight balanced` for a kind without exclusive classes to weigh."""
        if class_weight == "balanced":
            raise UserError(
                f"--class-weight balanced weighs single-label classes, but {self.why_no_class_weight} ({self.name}); "
                "drop --class-weight or pass --class-weight none."
            )

    def metrics(self, num_outputs: int) -> list:
        """The Keras metrics to compile with: the headline where one accumulates over batches."""
        return []

    def activate(self, logits: Any) -> Any:
        """The model's outputs (float32) from its logits (B, K)."""
        raise NotImplementedError

    def output_layer(self) -> Any:
        """The Keras layer that turns logits (B, K) into the model's outputs, named `outputs`."""
        raise NotImplementedError

    def empty_outputs(self, num_labels: int) -> np.ndarray:
        """The outputs for no input at all, of the right shape."""
        return np.zeros((0, num_labels), np.float32)

    def tidy_outputs(self, outputs: np.ndarray) -> np.ndarray:
        """A model's outputs as a classifier gives them, whatever computed them (TensorFlow, ONNX Runtime)."""
        return outputs

    # --- targets from labels ------------------------------------------------------------------------------------------

    def label_feature(self, labels: list[str]) -> Any:
        """The `datasets` feature of a split's `label` column (`core.labels`, `core.data`)."""
        raise NotImplementedError

    def map_labels(self, raw: dict, labels: list[str] | None, separator: str) -> tuple[dict[str, list], list[str]]:
        """Each raw split's labels in the kind's form (`core.labels`), and the label names."""
        raise NotImplementedError

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

    def answer(self, labels: list[str], decision: Any) -> Any:
        """One decision (a row of `decide`, or of a split's targets) in words, as predictions.jsonl holds it: a label
        name, a list of label names, or a number."""
        raise NotImplementedError

    def choose_thresholds(self, outputs: np.ndarray, targets: np.ndarray) -> list[float] | None:
        """The decision thresholds chosen on validation (recorded in run.json `thresholds`); None where none."""
        return None

    def monitored_score(self, targets: np.ndarray, outputs: np.ndarray) -> float | None:
        """The watched validation score (`monitor`) computed from every validation output at once, where no Keras
        metric accumulated over batches gives it; None where the compiled metric does (the training loop then
        reads Keras' own `val_<headline>`)."""
        return None

    def validation_scores(
        self, targets: np.ndarray, outputs: np.ndarray, thresholds: list[float] | None = None
    ) -> dict[str, float]:
        """run.json's `validation`: `loss` (the mean loss of the outputs against the targets, as the training loss
        counts it), then the headline and the kind's other scores."""
        raise NotImplementedError


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
