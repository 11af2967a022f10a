"""The model card (README.md) of a run directory: what was trained, on what, how well, and how to load it."""

from __future__ import annotations

from pathlib import Path

CARD_FILE = "README.md"


def render_card(record: dict) -> str:
    """The card's Markdown, from the run.json record alone."""
    model, data, training = record["model"], record["data"], record["training"]
    config, hp = model.get("config", {}), record["hyperparameters"]
    splits = ", ".join(f"{name} {rows:,}" for name, rows in data["splits"].items())
    history = "\n".join(
        f"| {row['epoch']} | {row['loss']:.4f} | {row['val_loss']:.4f} | {row['val_accuracy']:.4f} |"
        for row in training["history"]
    )
    settings = "\n".join(f"| `{key}` | {value} |" for key, value in sorted(hp.items()))
    return f"""# {model["name"]}

A Transformer text classifier trained from random initialisation (no pretraining) by `python -m scratch`.

## Data
- Source: {data.get("source", "?")}
- Labels: {", ".join(data["labels"])}
- Splits: {splits}
- Texts cut to {config.get("max_length", "?")} tokens; tokenizer `{config.get("tokenizer", "?")}` \
({config.get("tokenizer_vocab_size", "?")} tokens)

## Model
- {config.get("num_layers")} encoder blocks ({config.get("norm")}-LN), d_model {config.get("d_model")}, \
{config.get("num_heads")} heads, feed-forward {config.get("d_ff")} ({config.get("activation")}), \
dropout {config.get("dropout")}{", causal attention, last-token pooling" if config.get("causal") else ", masked mean pooling"}
- Parameters: {model["params"]:,} ({model["trainable_params"]:,} trainable)

## Results
- Validation accuracy {record["validation"]["accuracy"]:.4f}, macro F1 {record["validation"]["macro_f1"]:.4f} \
(best epoch {training["best_epoch"]} of {training["epochs_run"]})
- Training took {training["seconds"]:.0f} s at {training["examples_per_second"]:.0f} examples/s

| epoch | loss | val_loss | val_accuracy |
| --- | --- | --- | --- |
{history}

## Settings
| option | value |
| --- | --- |
{settings}

## Use
```python
from core.classifier import load

model = load("path/to/this/run")
model.predict_proba(["a gripping, funny film"])  # (1, {len(data["labels"])}) probabilities
tokens, attention = model.explain("a gripping, funny film")  # attention: (layers, heads, T, T)
```
The file `{model.get("file", "model.keras")}` is an end-to-end Keras 2 model from raw strings to probabilities;
load it with `tf.keras.models.load_model(path, compile=False)` after `import scratch.predict` (which
registers its layers).
"""


def write_card(run_dir: str | Path, record: dict) -> Path:
    path = Path(run_dir) / CARD_FILE
    path.write_text(render_card(record), encoding="utf-8")
    return path
