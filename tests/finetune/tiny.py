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


KINDS = ("single_label_classification", "multi_label_classification", "regression")
# (kind, on text pairs?): the runs of `kind_runs` (tests/finetune/conftest.py); single-label texts is the base run
CASES = [(KINDS[0], True), (KINDS[1], False), (KINDS[1], True), (KINDS[2], False), (KINDS[2], True)]


def case_name(case: tuple[str, bool]) -> str:
    """`single-pairs`, `multi-texts`, ...: a case's short name, for test ids and folders."""
    return f"{case[0].split('_')[0]}-{'pairs' if case[1] else 'texts'}"


def kind_rows(problem: str, pairs: bool, n: int, seed: int = 0) -> tuple[str, list[tuple]]:
    """`n` rows of a task of kind `problem` on single texts or (`pairs`) text pairs, learnable from the words, and the
    CSV header: columns `text` (or `sentence1`, `sentence2`) and `label`.

    Each example is two of the test phrases, joined by "and" in one text or the two texts of a pair. Its label is
    whether both phrases have the same polarity (`same`/`different`, single label), the polarities present
    (`negative;positive` when both, multi-label), or the number of positive phrases times 2.5 (regression, 0 to 5).
    """
    import random

    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        first, second = rng.random() < 0.5, rng.random() < 0.5  # positive?
        a, b = (rng.choice(POSITIVE if positive else NEGATIVE) for positive in (first, second))
        if problem == KINDS[0]:
            label: object = "same" if first == second else "different"
        elif problem == KINDS[1]:
            label = ";".join(sorted({"positive" if p else "negative" for p in (first, second)}))
        else:
            label = 2.5 * (first + second)
        rows.append((a, b, label) if pairs else (f"{a} and {b}", label))
    return ("sentence1,sentence2,label" if pairs else "text,label"), rows


def write_kind_csv(path: Path, problem: str, pairs: bool, n: int = 200) -> Path:
    """`kind_rows` written to `path` (CSV)."""
    from tests.conftest import write_csv

    header, rows = kind_rows(problem, pairs, n)
    return write_csv(path, rows, header)


def kind_options(problem: str, pairs: bool) -> dict[str, Any]:
    """The data options that read `write_kind_csv`'s file as its kind (for `train_tiny_run`)."""
    columns = {"text_column": "sentence1", "text_pair_column": "sentence2"} if pairs else {}
    return {"problem": problem, **columns}
