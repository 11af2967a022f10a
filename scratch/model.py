"""The from-scratch Transformer classifier: its configuration, the presets, and the model builders.

    token ids (B, T) ──embedding + sinusoids──► (B, T, C) ──N encoder blocks──► (B, T, C)
        ──masked mean pooling (or last real token with causal)──► (B, C) ──dense──► logits (B, K)

The end-to-end model puts the tokenizer in front and a softmax behind, so the saved `.keras` file maps raw
strings (B,) to class probabilities (B, K).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import tensorflow as tf

from scratch.embedding import TokenAndPositionEmbedding
from scratch.encoder import ACTIVATIONS, NORMS, TransformerEncoderBlock
from scratch.pooling import LastTokenPooling, MaskedMeanPooling
from scratch.tokenizer import TOKENIZERS, WORD_RESERVED


@dataclass
class ModelConfig:
    """Shape of the network. `vocab_size` is the requested word vocabulary (WordPiece brings its own)."""

    num_labels: int = 2
    vocab_size: int = 20000
    num_layers: int = 2
    d_model: int = 128
    num_heads: int = 4
    d_ff: int = 512
    dropout: float = 0.1
    activation: str = "gelu"
    norm: str = "post"
    causal: bool = False
    tokenizer: str = "words"

    def __post_init__(self) -> None:
        for name in ("num_labels", "vocab_size", "num_layers", "d_model", "num_heads", "d_ff"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be a positive integer, got {getattr(self, name)}.")
        if self.num_labels < 2:
            raise ValueError(f"A classifier needs at least 2 labels, got num_labels={self.num_labels}.")
        if self.d_model % self.num_heads:
            raise ValueError(
                f"d_model {self.d_model} is not divisible by num_heads {self.num_heads}: each head gets "
                f"d_model / num_heads dimensions. Choose e.g. --num-heads {_divisor_near(self.d_model, self.num_heads)}."
            )
        if self.vocab_size <= len(WORD_RESERVED):
            raise ValueError(
                f"vocab_size {self.vocab_size} is not larger than the {len(WORD_RESERVED)} reserved tokens "
                f"(padding and unknown); use at least {len(WORD_RESERVED) + 1}."
            )
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout}.")
        if self.norm not in NORMS:
            raise ValueError(f"norm must be one of {', '.join(NORMS)}, got {self.norm!r}.")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {', '.join(ACTIVATIONS)}, got {self.activation!r}.")
        if self.tokenizer not in TOKENIZERS:
            raise ValueError(f"tokenizer must be one of {', '.join(TOKENIZERS)}, got {self.tokenizer!r}.")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def _divisor_near(d_model: int, num_heads: int) -> int:
    return min((h for h in range(1, d_model + 1) if d_model % h == 0), key=lambda h: abs(h - num_heads))


# Presets are data: the fields they set, everything else from ModelConfig's defaults.
PRESETS: dict[str, dict] = {
    "tiny": {"vocab_size": 1000, "num_layers": 2, "d_model": 32, "num_heads": 2, "d_ff": 64, "dropout": 0.0},
    "small": {"vocab_size": 20000, "num_layers": 2, "d_model": 128, "num_heads": 4, "d_ff": 512, "dropout": 0.2},
    "base": {"vocab_size": 30000, "num_layers": 4, "d_model": 256, "num_heads": 8, "d_ff": 1024, "dropout": 0.1},
}
DEFAULT_PRESET = "small"


def config_from_preset(preset: str = DEFAULT_PRESET, **overrides) -> ModelConfig:
    """The preset's configuration with every override that is not None applied."""
    if preset not in PRESETS:
        raise ValueError(f"Unknown preset {preset!r}; choose one of {', '.join(PRESETS)}.")
    fields = {**PRESETS[preset], **{k: v for k, v in overrides.items() if v is not None}}
    return ModelConfig(**fields)


def build_classifier(config: ModelConfig, vocab_size: int | None = None, name: str = "classifier") -> tf.keras.Model:
    """Token ids (B, T) -> logits (B, num_labels). `vocab_size` is the tokenizer's actual vocabulary size."""
    token_ids = tf.keras.Input(shape=(None,), dtype=tf.int64, name="token_ids")  # (B, T)
    x = TokenAndPositionEmbedding(vocab_size or config.vocab_size, config.d_model, config.dropout, name="embedding")(
        token_ids
    )  # (B, T, C), with the padding mask attached
    for i in range(config.num_layers):
        x = TransformerEncoderBlock(
            config.num_heads,
            config.d_ff,
            dropout=config.dropout,
            activation=config.activation,
            norm=config.norm,
            causal=config.causal,
            name=f"encoder_{i}",
        )(x)  # (B, T, C)
    if config.norm == "pre":
        x = tf.keras.layers.LayerNormalization(epsilon=1e-5, name="final_norm")(x)  # (B, T, C)
    pooling = LastTokenPooling if config.causal else MaskedMeanPooling
    x = pooling(name="pooling")(x)  # (B, C)
    x = tf.keras.layers.Dropout(config.dropout, name="head_dropout")(x)
    logits = tf.keras.layers.Dense(config.num_labels, dtype="float32", name="logits")(x)  # (B, K)
    return tf.keras.Model(token_ids, logits, name=name)


def build_end_to_end(tokenizer: tf.keras.layers.Layer, classifier: tf.keras.Model) -> tf.keras.Model:
    """Raw strings (B,) -> class probabilities (B, K): the model a run saves."""
    texts = tf.keras.Input(shape=(), dtype=tf.string, name="text")  # (B,)
    token_ids = tokenizer(texts)  # (B, T)
    probabilities = tf.keras.layers.Softmax(dtype="float32", name="probabilities")(classifier(token_ids))  # (B, K)
    return tf.keras.Model(texts, probabilities, name="scratch_transformer")
