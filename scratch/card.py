"""The from-scratch side's sections of the model card (`README.md`) of a run directory; see `core.card`."""

from __future__ import annotations

from pathlib import Path

from core import card


def render_card(record: dict) -> str:
    """The card's Markdown, from the run.json record alone."""
    model = record["model"]
    config = model.get("config", {})
    pooling = ", causal attention, last-token pooling" if config.get("causal") else ", masked mean pooling"
    if config.get("embeddings") == "minilm":
        intro = (
            "A Transformer text classifier trained by `python -m scratch` from random initialisation, except its token "
            "vectors: the packaged all-MiniLM-L6-v2's on their first d_model principal components, frozen."
        )
    else:
        intro = (
            "A Transformer text classifier trained from random initialisation (no pretraining) by `python -m scratch`."
        )
    distilled = record.get("distillation")
    if distilled:
        intro += (
            f" Distilled from the {distilled['teacher_side']} run `{distilled['teacher']}`: gold weight "
            f"{distilled['weight']}, temperature {distilled['temperature']}, {distilled['augment']} augmented "
            f"cop{'y' if distilled['augment'] == 1 else 'ies'} of each training text ({distilled['transfer_rows']:,} "
            "rows in `transfer_set.npz`)."
        )
    return card.render_card(
        record,
        title=model["name"],
        intro=intro,
        model=[
            f"- {config.get('num_layers')} encoder blocks ({config.get('norm')}-LN), d_model {config.get('d_model')}, "
            f"{config.get('num_heads')} heads, feed-forward {config.get('d_ff')} ({config.get('activation')}), "
            f"dropout {config.get('dropout')}{pooling}",
            f"- Tokenizer `{config.get('tokenizer', '?')}` ({config.get('tokenizer_vocab_size', '?')} tokens), "
            "inside the saved model",
        ],
        usage=[
            "```python",
            'tokens, attention = model.explain("a gripping, funny film")  # attention: (layers, heads, T, T)',
            "```",
            "",
            f"The file `{model.get('file', 'model.keras')}` is an end-to-end Keras 2 model from raw strings to "
            "probabilities; load it with `tf.keras.models.load_model(path, compile=False)` after "
            "`import scratch.predict` (which registers its layers).",
        ],
    )


def write_card(run_dir: str | Path, record: dict) -> Path:
    """Writes `run_dir/README.md`."""
    return card.write_card(run_dir, render_card(record))
