"""The fine-tuning options (`python -m finetune ... --model --epochs ...`), checked before anything loads."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar

from core.args import ClassifierBudgetArguments

POOLINGS = ("cls", "mean")  # finetune.modeling builds the mean-pooled model


@dataclass
class FinetuneArguments(ClassifierBudgetArguments):
    """Which pretrained checkpoint to start from and how to train it (the budget options: `ClassifierBudgetArguments`).

    The defaults are the settings that reached the quality targets with the packaged model
    (docs/results.md#each-side-with-its-defaults).
    """

    DEFAULT_EPOCHS: ClassVar[int] = 3
    _argument_group_name = "fine-tuning options"

    model: str = field(
        default="minilm",
        metadata={
            "help": "A local checkpoint directory, a hub id, or an alias: minilm (the packaged offline "
            "all-MiniLM-L6-v2 BERT) or bert-base (bert-base-uncased, needs a network)."
        },
    )
    batch_size: int = field(default=32, metadata={"help": "Examples per optimizer step (over all devices)."})
    learning_rate: float = field(default=1e-4, metadata={"help": "Peak AdamW learning rate, reached after warmup."})
    warmup_ratio: float = field(
        default=0.1, metadata={"help": "Fraction of all training steps spent warming the learning rate up from 0."}
    )
    weight_decay: float = field(
        default=0.01, metadata={"help": "Decoupled weight decay (not applied to biases and LayerNorm)."}
    )
    patience: int = field(
        default=1, metadata={"help": "Stop after this many epochs without a better validation accuracy."}
    )
    pooling: str = field(
        default="cls",
        metadata={
            "help": "What the classification head reads: cls (BERT's [CLS] pooler) or mean (the mean of the real "
            "tokens' last hidden states, no pooler; how sentence-embedding checkpoints such as minilm were trained).",
            "choices": POOLINGS,
        },
    )
    focal_gamma: float = field(
        default=0.0,
        metadata={
            "help": "Multi-label: train with the focal loss of this gamma (e.g. 2), which weighs down the easy "
            "negatives that dominate rare labels; 0 is plain binary cross-entropy."
        },
    )
    mixed_precision: bool = field(
        default=False, metadata={"help": "Compute in float16 with float32 weights (for GPUs; slow on most CPUs)."}
    )
    onnx: bool = field(
        default=True,
        metadata={
            "help": "Do not write model.onnx (by default the run also writes it, and is served through ONNX Runtime "
            "when it reproduces the TensorFlow model on the validation split)."
        },
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.model:
            raise ValueError("--model must name a checkpoint: minilm, bert-base, a directory or a hub id.")
        if not 1 <= self.batch_size <= 4096:
            raise ValueError(f"--batch-size must be between 1 and 4096, got {self.batch_size}.")
        if not 0 < self.learning_rate <= 1e-2:
            raise ValueError(
                f"--learning-rate must be in (0, 0.01], got {self.learning_rate}; "
                "fine-tuning a pretrained BERT usually takes 2e-5 to 1e-4."
            )
        if not 0 <= self.warmup_ratio < 1:
            raise ValueError(f"--warmup-ratio must be in [0, 1), got {self.warmup_ratio}.")
        if not 0 <= self.weight_decay < 1:
            raise ValueError(f"--weight-decay must be in [0, 1), got {self.weight_decay}.")
        if self.pooling not in POOLINGS:
            raise ValueError(f"--pooling must be one of {', '.join(POOLINGS)}, got {self.pooling!r}.")
        if self.patience < 1:
            raise ValueError(f"--patience must be at least 1, got {self.patience}.")
        if not 0 <= self.focal_gamma <= 5:
            raise ValueError(f"--focal-gamma must be between 0 and 5 (2 is usual), got {self.focal_gamma}.")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
