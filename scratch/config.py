"""The shape of the from-scratch network: its configuration dataclass and the presets, free of TensorFlow.

The command line's options (`scratch.args`) build and check a `ModelConfig` before TensorFlow loads.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from core import kinds
from core.kinds import SINGLE_LABEL, Kind

NORMS = ("post", "pre")
ACTIVATIONS = ("gelu", "relu")
TOKENIZERS = ("words", "wordpiece")
EMBEDDINGS = ("random", "minilm")
# How a pair task's model reads its two texts (`scratch.model`): as one sequence `text [SEP] text_pair`; each text
# alone through the same encoder, the two pooled vectors meeting in [u, v, |u - v|, u * v] (InferSent); or each
# encoded text attending to the other before pooling (decomposable attention, ESIM).
PAIR_READINGS = ("joint", "siamese", "cross")
# What validation preferred on SICK and STS-B (docs/results.md, "Pair readings from scratch"): first on STS-B by
# 5 points of Spearman, within 1.2 points of accuracy of `siamese` on SICK, both far above `joint`.
DEFAULT_PAIR_READING = "cross"
# How each reading reads a pair, in the words of the model card.
PAIR_READING_NOTES = {
    "joint": "as one sequence `text [SEP] text_pair`, the longer text cut first to fit, and adds to each token the "
    "vector of its text (segment embeddings, as BERT's token types)",
    "siamese": "as two texts (the longer cut first to fit), each encoded alone by the same encoder and pooled to u "
    "and v, which meet in [u, v, |u - v|, u * v] (InferSent) before the head",
    "cross": "as two texts (the longer cut first to fit), each encoded by the same encoder, then attending to the "
    "other (soft alignment and comparison, as ESIM) before both are pooled and meet in [u, v, |u - v|, u * v]",
}
MINILM_WIDTH = 384  # the packaged checkpoint's token vectors: its WordPiece vocabulary x 384
PAD = ""
WORD_UNKNOWN = "[UNK]"
WORD_RESERVED = (PAD, WORD_UNKNOWN)  # ids 0 and 1 of a word vocabulary
SEPARATOR = "[SEP]"  # between the two texts of a pair (id 2 of a pair task's word vocabulary; WordPiece has its own)


@dataclass
class ModelConfig:
    """Shape of the network. `vocab_size` is the requested word vocabulary (WordPiece brings its own). The defaults
    are the default preset, `small`. `num_labels` is the numbers the head gives per example and `problem_type` how
    they are read (transformers' names): softmax over classes, a sigmoid per label, or one value for regression;
    `pairs`: the input is two texts `text [SEP] text_pair`; `pair_reading` how the network reads them (`PAIR_READINGS`;
    None for single texts, and for pairs it becomes `DEFAULT_PAIR_READING`)."""

    num_labels: int = 2
    problem_type: str = SINGLE_LABEL
    pairs: bool = False
    pair_reading: str | None = None
    vocab_size: int = 20000
    num_layers: int = 2
    d_model: int = 128
    num_heads: int = 4
    d_ff: int = 512
    dropout: float = 0.2
    activation: str = "gelu"
    norm: str = "post"
    causal: bool = False
    tokenizer: str = "words"
    embeddings: str = "random"

    def __post_init__(self) -> None:
        kind = kinds.get(self.problem_type)  # a ValueError naming the kinds for an unknown one
        if not kind.has_labels and self.num_labels != 1:
            raise ValueError(f"A {kind.title} model gives one value per example, got num_labels={self.num_labels}.")
        if kind.has_labels and self.num_labels < 2:
            raise ValueError(f"A classifier needs at least 2 labels, got num_labels={self.num_labels}.")
        check_shape(self)
        check_pair_reading(self)
        if self.vocab_size <= len(WORD_RESERVED):
            raise ValueError(
                f"--vocab-size {self.vocab_size} is not larger than the {len(WORD_RESERVED)} reserved tokens "
                f"(padding and unknown); use at least {len(WORD_RESERVED) + 1}."
            )
        if self.tokenizer not in TOKENIZERS:
            raise ValueError(f"--tokenizer must be one of {', '.join(TOKENIZERS)}, got {self.tokenizer!r}.")
        if self.embeddings not in EMBEDDINGS:
            raise ValueError(f"--embeddings must be one of {', '.join(EMBEDDINGS)}, got {self.embeddings!r}.")
        if self.embeddings == "minilm" and self.tokenizer != "wordpiece":
            raise ValueError(
                "--embeddings minilm holds a vector for each piece of the packaged checkpoint's WordPiece "
                f"vocabulary, not for the {self.tokenizer!r} tokenizer's; add --tokenizer wordpiece."
            )
        if self.embeddings == "minilm" and self.d_model > MINILM_WIDTH:
            raise ValueError(
                f"--embeddings minilm projects the checkpoint's {MINILM_WIDTH}-wide token vectors down to d_model; "
                f"--d-model {self.d_model} is wider. Use at most {MINILM_WIDTH}."
            )

    @property
    def kind(self) -> Kind:
        """The kind of task the head's outputs are read as (`core.kinds`)."""
        return kinds.get(self.problem_type)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def check_pair_reading(config: ModelConfig) -> None:
    """A pair task's reading becomes the default when unset; a reading given for single texts is refused."""
    if config.pair_reading is not None and config.pair_reading not in PAIR_READINGS:
        raise ValueError(f"--pair-reading must be one of {', '.join(PAIR_READINGS)}, got {config.pair_reading!r}.")
    if config.pairs and config.pair_reading is None:
        config.pair_reading = DEFAULT_PAIR_READING
    if not config.pairs and config.pair_reading is not None:
        raise ValueError(
            f"--pair-reading {config.pair_reading} says how to read the two texts of a pair task, and this task has "
            "single texts; drop --pair-reading, or give the second texts' column with --text-pair-column."
        )


def check_shape(config) -> None:
    """The checks every from-scratch Transformer's config makes (the classifier's and the translator's), with the
    command-line flag of each bad value named."""
    for name in ("vocab_size", "num_layers", "d_model", "num_heads", "d_ff"):
        if getattr(config, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(config, name)}.")
    if config.d_model % config.num_heads:
        near = min(
            (h for h in range(1, config.d_model + 1) if config.d_model % h == 0),
            key=lambda h: abs(h - config.num_heads),
        )
        raise ValueError(
            f"--d-model {config.d_model} is not divisible by --num-heads {config.num_heads}: each head gets "
            f"d_model / num_heads dimensions. Choose e.g. --num-heads {near}."
        )
    if not 0.0 <= config.dropout < 1.0:
        raise ValueError(f"--dropout must be in [0, 1), got {config.dropout}.")
    check_block_options(config.norm, config.activation)


def check_block_options(norm: str, activation: str) -> None:
    """The errors every Transformer block raises for an unknown `norm` or feed-forward `activation`."""
    if norm not in NORMS:
        raise ValueError(f"--norm must be one of {', '.join(NORMS)}, got {norm!r}.")
    if activation not in ACTIVATIONS:
        raise ValueError(f"--activation must be one of {', '.join(ACTIVATIONS)}, got {activation!r}.")


# Presets are data: the fields they change from ModelConfig's defaults, which are the `small` preset itself.
PRESETS: dict[str, dict] = {
    "tiny": {"vocab_size": 1000, "num_layers": 2, "d_model": 32, "num_heads": 2, "d_ff": 64, "dropout": 0.0},
    "small": {},
    "base": {"vocab_size": 30000, "num_layers": 4, "d_model": 256, "num_heads": 8, "d_ff": 1024, "dropout": 0.1},
}
DEFAULT_PRESET = "small"


def preset_fields(presets: dict[str, dict], preset: str, overrides: dict) -> dict:
    """A preset's fields with every override that is not None applied; the one rule of both model families."""
    if preset not in presets:
        raise ValueError(f"--preset must be one of {', '.join(presets)}, got {preset!r}.")
    return {**presets[preset], **{k: v for k, v in overrides.items() if v is not None}}


def config_from_preset(preset: str = DEFAULT_PRESET, **overrides) -> ModelConfig:
    """The preset's configuration with every override that is not None applied."""
    return ModelConfig(**preset_fields(PRESETS, preset, overrides))
