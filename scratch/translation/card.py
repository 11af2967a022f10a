"""The translation run's sections of the model card (`README.md`) of a run directory; see `core.card`."""

from __future__ import annotations

from pathlib import Path

from core import card
from core.record import RunRecord


def render_card(record: RunRecord) -> str:
    """The card's Markdown, from the run's record alone."""
    config, columns = record.model.config, record.data.columns
    stacks = (
        f"{config['num_layers']} encoder and {config['num_layers']} decoder blocks"
        if config["arch"] == "encoder-decoder"
        else f"{config['num_layers']} causal blocks over source, separator and target in one sequence"
    )
    intro = (
        f"A Transformer ({config['arch']}) that translates `{columns['source']}` to `{columns['target']}`, trained "
        "from random initialisation (no pretraining) by `python -m scratch`."
    )
    teacher = record.distillation
    if teacher:
        intro += (
            f" It learned from the translations of the train sources by {teacher['description']}, not their references."
        )
    return card.render_card(
        record,
        title=record.model.name,
        intro=intro,
        model=[
            f"- {stacks} ({config['norm']}-LN), d_model {config['d_model']}, {config['num_heads']} heads, "
            f"feed-forward {config['d_ff']} ({config['activation']}), dropout {config['dropout']}, "
            f"{'tied' if config['tie_embeddings'] else 'separate'} input and output embeddings",
            f"- Joint SentencePiece vocabulary of {record.tokenizer['vocab_size']:,} pieces "
            f"(`{record.tokenizer['file']}`), inside the saved model",
        ],
        usage=[
            "or with TensorFlow alone, tokenisation and decoding inside the graph:",
            "",
            "```python",
            "import tensorflow as tf",
            "import tensorflow_text  # noqa: F401 - registers the SentencePiece ops",
            "",
            'model = tf.saved_model.load("path/to/this/run/saved_model")',
            'model.translate(tf.constant(["O Tom pode falar francês também."]))  # greedy',
            'model.translate_beam(tf.constant(["O Tom pode falar francês também."]), tf.constant(4))  # beam 4',
            "```",
        ],
    )


def write_card(run_dir: str | Path, record: RunRecord) -> Path:
    """Writes `run_dir/README.md`."""
    return card.write_card(run_dir, render_card(record))
