"""The from-scratch side's sections of the model card (`README.md`) of a run directory; see `core.card`."""

from __future__ import annotations

from pathlib import Path

from core import card
from core.record import RunRecord
from scratch.config import PAIR_READING_NOTES


def render_card(record: RunRecord) -> str:
    """The card's Markdown, from the run's record alone."""
    model = record.model
    config = model.config or {}
    pooling = ", causal attention, last-token pooling" if config.get("causal") else ", masked mean pooling"
    what = f"A Transformer {card.carded(record.kind).noun}"
    example = '"A man plays a guitar.", "Someone plays music."' if config.get("pairs") else '"a gripping, funny film"'
    if config.get("embeddings") == "minilm":
        intro = (
            f"{what} trained by `python -m scratch` from random initialisation, except its token "
            "vectors: the packaged all-MiniLM-L6-v2's on their first d_model principal components, frozen."
        )
    else:
        intro = f"{what} trained from random initialisation (no pretraining) by `python -m scratch`."
    if config.get("pairs"):
        intro += f" It reads each text pair {PAIR_READING_NOTES[config.get('pair_reading') or 'joint']}."
    distilled = record.distillation
    if distilled:
        intro += (
            f" Distilled from the {distilled['teacher_side']} run `{distilled['teacher']}`: gold weight "
            f"{distilled['weight']}, temperature {distilled['temperature']}, {distilled['augment']} augmented "
            f"cop{'y' if distilled['augment'] == 1 else 'ies'} of each training text ({distilled['transfer_rows']:,} "
            "rows in `transfer_set.npz`)."
        )
    return card.render_card(
        record,
        title=model.name,
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
            f"tokens, attention = model.explain({example})  # attention: (layers, heads, T, T)",
            "```",
            "",
            f"The file `{model.file or 'model.keras'}` is an end-to-end Keras 2 model from raw strings "
            f"({'two inputs, `text` and `text_pair`' if config.get('pairs') else 'one input, `text`'}) to "
            f"{record.kind.outputs}; load it with "
            "`tf.keras.models.load_model(path, compile=False)` after `import scratch.predict` (which registers its "
            "layers).",
        ],
    )


def write_card(run_dir: str | Path, record: RunRecord) -> Path:
    """Writes `run_dir/README.md`."""
    return card.write_card(run_dir, render_card(record))
