"""Command-line options of `python -m scratch`: the model shape (a preset plus overrides) and training."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

from core.args import ClassifierBudgetArguments
from core.errors import UserError
from core.tasks import SINGLE_LABEL
from scratch.config import (
    ACTIVATIONS,
    DEFAULT_PAIR_READING,
    DEFAULT_PRESET,
    EMBEDDINGS,
    NORMS,
    PAIR_READINGS,
    PRESETS,
    TOKENIZERS,
    ModelConfig,
    config_from_preset,
)


def check_optimizer_options(options: Any) -> None:
    """The options both from-scratch trainers give `scratch.schedule.transformer_adamw` and their loss, each bad
    value named (`options`: `ScratchArguments` or `TranslationArguments`)."""
    if options.learning_rate <= 0:
        raise ValueError(f"--learning-rate must be positive, got {options.learning_rate}.")
    if not 0.0 <= options.label_smoothing < 1.0:
        raise ValueError(f"--label-smoothing must be in [0, 1), got {options.label_smoothing}.")
    if options.weight_decay < 0:
        raise ValueError(f"--weight-decay must be >= 0, got {options.weight_decay}.")
    if options.clip_norm <= 0:
        raise ValueError(f"--clip-norm must be positive, got {options.clip_norm}.")


# The distillation options' defaults; another value without --teacher is refused.
DISTILLATION_DEFAULTS = {"distill_weight": 0.5, "temperature": 2.0, "augment": 1}


@dataclass
class ShapeArguments:
    """The shape options every from-scratch Transformer takes; a field left unset comes from `--preset`."""

    num_layers: int | None = field(default=None, metadata={"help": "Blocks per stack (overrides the preset)."})
    d_model: int | None = field(default=None, metadata={"help": "Width of the token vectors (overrides the preset)."})
    num_heads: int | None = field(default=None, metadata={"help": "Attention heads; must divide --d-model."})
    d_ff: int | None = field(default=None, metadata={"help": "Hidden width of the feed-forward blocks."})
    dropout: float | None = field(default=None, metadata={"help": "Dropout rate (overrides the preset)."})
    norm: str = field(
        default="post",
        metadata={"help": "post: LayerNorm after each residual (original); pre: before.", "choices": NORMS},
    )

    def shape_overrides(self) -> dict[str, Any]:
        """These fields as `config_from_preset` overrides (None keeps the preset's value)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(ShapeArguments)}


@dataclass
class ScratchArguments(ClassifierBudgetArguments, ShapeArguments):
    """Model and training options (the budget options: `ClassifierBudgetArguments`). Model fields left unset come from `--preset`."""

    DEFAULT_EPOCHS: ClassVar[int] = 8
    _argument_group_name = "model and training options"

    preset: str = field(default=DEFAULT_PRESET, metadata={"help": "Model size.", "choices": tuple(PRESETS)})
    vocab_size: int | None = field(
        default=None, metadata={"help": "Word vocabulary size, 2 reserved tokens included (words tokenizer)."}
    )
    activation: str = field(default="gelu", metadata={"help": "Feed-forward activation.", "choices": ACTIVATIONS})
    tokenizer: str = field(
        default="words",
        metadata={
            "help": "words: a vocabulary adapted on train; wordpiece: the pretrained checkpoint's WordPiece.",
            "choices": TOKENIZERS,
        },
    )
    embeddings: str = field(
        default="random",
        metadata={
            "help": "random: token vectors learned from scratch; minilm (with --tokenizer wordpiece): the packaged "
            "checkpoint's token vectors on their first d_model principal components, frozen.",
            "choices": EMBEDDINGS,
        },
    )
    causal: bool = field(
        default=False, metadata={"help": "GPT-style decoder: causal attention, class read from the last real token."}
    )
    pair_reading: str | None = field(
        default=None,
        metadata={
            "help": "How a pair task's model reads its two texts: joint, one sequence text [SEP] text_pair; siamese, "
            "each text alone through the same encoder, meeting in [u, v, |u - v|, u * v]; cross, each encoded text "
            f"attending to the other before pooling. Default: {DEFAULT_PAIR_READING}.",
            "choices": PAIR_READINGS,
        },
    )
    batch_size: int = field(default=128, metadata={"help": "Examples per step (global, over all replicas)."})
    learning_rate: float = field(default=1e-3, metadata={"help": "Peak learning rate, reached after the warmup."})
    warmup_ratio: float = field(
        default=0.1,
        metadata={"help": "Share of the training steps spent in linear warmup before the 1/sqrt(step) decay."},
    )
    warmup_steps: int | None = field(default=None, metadata={"help": "Warmup steps; overrides --warmup-ratio."})
    weight_decay: float = field(default=0.01, metadata={"help": "AdamW decoupled weight decay (not on norms, biases)."})
    label_smoothing: float = field(
        default=0.1,
        metadata={"help": "Label smoothing of the single-label cross-entropy, in [0, 1) (multi-label: none)."},
    )
    clip_norm: float = field(default=1.0, metadata={"help": "Clip the global gradient norm to this value."})
    patience: int = field(
        default=2,
        metadata={
            "help": "Stop after this many epochs without a better validation headline score (accuracy, macro-F1 or "
            "Spearman, by the task's kind)."
        },
    )
    onnx: bool = field(
        default=True,
        metadata={
            "help": "Do not write model.onnx (by default the run also writes it, and is served through ONNX Runtime "
            "when it reproduces the TensorFlow model on the validation split)."
        },
    )
    teacher: str | None = field(
        default=None,
        metadata={
            "help": "Distil: a finished classification run (either side) on the same data whose probabilities the "
            "model learns from, on train and on --augment copies of it (scratch.distill)."
        },
    )
    distill_weight: float = field(
        default=DISTILLATION_DEFAULTS["distill_weight"],
        metadata={
            "help": "With --teacher: A in A * cross-entropy(gold) + (1 - A) * T^2 * KL(teacher || model), in [0, 1]."
        },
    )
    temperature: float = field(
        default=DISTILLATION_DEFAULTS["temperature"],
        metadata={"help": "With --teacher: T, the softmax temperature of teacher and model in the KL term."},
    )
    augment: int = field(
        default=DISTILLATION_DEFAULTS["augment"],
        metadata={
            "help": "With --teacher: augmented copies of each training text (masking, word replacement, n-gram "
            "sampling) that the teacher labels; 0 for none."
        },
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        # fails now, with the bad value named, rather than after loading data (a single-text task's refusal of
        # --pair-reading waits for the data)
        self.model_config(pairs=self.pair_reading is not None)
        for name in ("batch_size", "patience"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(self, name)}.")
        if self.warmup_steps is not None and self.warmup_steps < 1:
            raise ValueError(f"--warmup-steps must be at least 1, got {self.warmup_steps}.")
        if not 0 < self.warmup_ratio < 1:
            raise ValueError(f"--warmup-ratio must be in (0, 1), got {self.warmup_ratio}.")
        check_optimizer_options(self)
        self.check_distillation()

    def check_distillation(self) -> None:
        """The distillation options name their bad value before any data loads."""
        if not 0.0 <= self.distill_weight <= 1.0:
            raise ValueError(f"--distill-weight must be in [0, 1] (1: gold labels only), got {self.distill_weight}.")
        if not 0 < self.temperature < math.inf:
            raise ValueError(
                f"--temperature must be positive and finite (1 leaves the teacher's probabilities as they are), got {self.temperature}."
            )
        if self.augment < 0:
            raise ValueError(f"--augment must be 0 or more copies of each training text, got {self.augment}.")
        given = [name for name in DISTILLATION_DEFAULTS if getattr(self, name) != DISTILLATION_DEFAULTS[name]]
        if self.teacher is None and given:
            flags = ", ".join(f"--{name.replace('_', '-')}" for name in given)
            raise ValueError(f"{flags} only apply with --teacher RUN_DIR; add a teacher, or leave them out.")
        if self.teacher is not None and self.class_weight == "balanced":
            raise ValueError(
                "--class-weight balanced does not combine with --teacher (the teacher's probabilities already "
                "carry the classes' balance); leave one of them out."
            )

    def model_config(self, num_labels: int = 2, problem_type: str = SINGLE_LABEL, pairs: bool = False) -> ModelConfig:
        """The preset's configuration with this command line's overrides, for a task of `problem_type` whose model
        gives `num_labels` numbers per example (`core.data.TaskData.num_outputs`), on text pairs with `pairs`.

        Raises:
            UserError: an option the task refuses (`--pair-reading` for single texts), named with what to do.
        """
        try:
            return self._model_config(num_labels, problem_type, pairs)
        except ValueError as error:
            raise UserError(str(error)) from None

    def _model_config(self, num_labels: int, problem_type: str, pairs: bool) -> ModelConfig:
        return config_from_preset(
            self.preset,
            num_labels=num_labels,
            problem_type=problem_type,
            pairs=pairs,
            pair_reading=self.pair_reading,
            vocab_size=self.vocab_size,
            activation=self.activation,
            **self.shape_overrides(),
            causal=self.causal,
            tokenizer=self.tokenizer,
            embeddings=self.embeddings,
        )

    def warmup(self, total_steps: int) -> int:
        """Warmup steps: `--warmup-steps`, or `--warmup-ratio` of the run's total optimizer steps.

        `total_steps` is the plan's (`BudgetArguments.plan`): every epoch's length-grouped batches, cut at
        `--max-steps`.

        >>> ScratchArguments().warmup(4_224)
        423
        >>> ScratchArguments(warmup_steps=500).warmup(4_224)
        500
        """
        if self.warmup_steps is not None:
            return self.warmup_steps
        return max(1, math.ceil(self.warmup_ratio * total_steps))

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
