"""A tiny random-weight BERT checkpoint and a few-step fine-tuning run on it, for tests of any package."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import NEGATIVE, POSITIVE

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
EXTRA = ["the", "film", "movie", "not", "very", "and", "it", "was", "a", ".", ",", "!"]


def tiny_vocab() -> list[str]:
    """Special tokens, then every word of the test phrases, so none of them becomes [UNK]."""
    words = sorted({w for phrase in POSITIVE + NEGATIVE for w in phrase.split()} | set(EXTRA))
    return SPECIAL + words


def make_tiny_bert(directory: Path, pytorch_only: bool = False, seed: int = 0) -> Path:
    """Writes a random-weight 2-layer BERT (hidden 32, 2 heads) with its WordPiece tokenizer to `directory`.

    Args:
        directory: where to write; created if needed.
        pytorch_only: write the weights as a PyTorch-style `model.safetensors` (parameter names and layouts as
            PyTorch's BertModel has them) instead of `tf_model.h5`, as hub checkpoints without TF weights do.
        seed: the weights' seed; the same seed gives the same weights in either format.

    Returns:
        `directory`, loadable with `--model directory`.
    """
    import tensorflow as tf
    from transformers import BertConfig, BertTokenizerFast, TFBertModel

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    vocab = directory / "vocab.txt"
    vocab.write_text("\n".join(tiny_vocab()) + "\n", encoding="utf-8")
    BertTokenizerFast(vocab_file=str(vocab), do_lower_case=True).save_pretrained(directory)
    config = BertConfig(
        vocab_size=len(tiny_vocab()),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        architectures=["BertModel"],
    )
    tf.keras.utils.set_random_seed(seed)
    model = TFBertModel(config)
    model(model.dummy_inputs, training=False)
    if not pytorch_only:
        model.save_pretrained(directory)
        return directory
    from safetensors.numpy import save_file

    config.save_pretrained(directory)
    save_file(pytorch_state_dict(model), str(directory / "model.safetensors"))
    return directory


def pytorch_state_dict(model) -> dict[str, Any]:
    """The weights of a TF BERT under the names and layouts PyTorch's `BertModel` uses (no torch needed)."""
    import numpy as np
    from transformers.modeling_tf_pytorch_utils import TransposeType, convert_tf_weight_name_to_pt_weight_name

    state = {}
    for weight in model.weights:
        name, transpose = convert_tf_weight_name_to_pt_weight_name(
            weight.name, start_prefix_to_remove="", tf_weight_shape=weight.shape
        )
        name = name.removeprefix(model.base_model_prefix + ".")  # PyTorch's BertModel has no main-layer scope
        value = weight.numpy()
        if transpose is TransposeType.SIMPLE:
            value = value.T
        state[name] = np.ascontiguousarray(value)
    return state


def train_tiny_run(output_dir: Path, train_file: Path, **overrides: Any) -> Path:
    """Fine-tunes the tiny BERT on `train_file` for a few steps through `finetune`'s main; returns the run.

    Keyword arguments override command-line options by their dataclass names (`epochs=1`,
    `mixed_precision=True`; False leaves a flag out, None drops an option).
    """
    from finetune.__main__ import main

    output_dir = Path(output_dir)
    model_dir = output_dir.parent / "tiny-bert"
    if not (model_dir / "config.json").is_file():
        make_tiny_bert(model_dir)
    options: dict[str, Any] = {
        "train_file": train_file,
        "output_dir": output_dir,
        "model": model_dir,
        "epochs": 2,
        "batch_size": 8,
        "learning_rate": 5e-3,
        "warmup_ratio": 0.1,
        "max_length": 16,
        "seed": 0,
        **overrides,
    }
    argv = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            argv.append(flag)
        elif value is not False and value is not None:
            argv += [flag, *map(str, value if isinstance(value, list | tuple) else [value])]
    main(argv)
    return output_dir
