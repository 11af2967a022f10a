"""The model card (`README.md`) saved with every fine-tuned run."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def write_card(run_dir: Path, run: dict[str, Any]) -> Path:
    """Writes `run_dir/README.md` from the run's record: task, data, hyperparameters, metrics, how to load it."""
    data, model, training = run["data"], run["model"], run["training"]
    options = data["options"]
    task = options.get("task") or options.get("train_file")
    lines = [
        "---",
        "library_name: transformers",
        "pipeline_tag: text-classification",
        "tags: [tensorflow, text-classification]",
        "---",
        "",
        f"# {model['name']} fine-tuned on {task}",
        "",
        f"A `{model.get('architecture', 'sequence classification')}` model fine-tuned from `{model['source']}` "
        f"({model['params']:,} parameters) to tell apart {len(data['labels'])} classes: "
        + ", ".join(f"`{label}`" for label in data["labels"])
        + ".",
        "",
        "## Data",
        "",
        f"Source: {data['source']}. Texts cut at {options['max_length']} tokens.",
        "",
        "| split | rows | sha256 of (text, label) rows |",
        "|---|---|---|",
        *(
            f"| {split} | {rows:,} | `{data['fingerprints'].get(split, '')}` |"
            for split, rows in data["splits"].items()
        ),
        "",
        "## Training",
        "",
        "| hyperparameter | value |",
        "|---|---|",
        *(f"| {key} | {value} |" for key, value in run["hyperparameters"].items()),
        "",
        f"{training['epochs_run']} epoch(s) in {training['seconds']:.0f} s "
        f"({training['examples_per_second']:.1f} training examples/s); best epoch {training['best_epoch']}.",
        "",
        "| epoch | loss | val_loss | val_accuracy |",
        "|---|---|---|---|",
        *(
            f"| {row['epoch']} | {row['loss']:.4f} | {row['val_loss']:.4f} | {row['val_accuracy']:.4f} |"
            for row in training["history"]
        ),
        "",
        "## Validation metrics",
        "",
        f"Accuracy {run['validation']['accuracy']:.4f}, macro-F1 {run['validation']['macro_f1']:.4f} "
        f"on the validation split ({data['splits'].get('validation', 0):,} rows).",
        "",
        "## How to load it",
        "",
        "```python",
        "from core.classifier import load",
        "",
        f'model = load("{run_dir.name}")',
        'model.predict_proba(["a gripping, funny film"])  # (1, n_labels), rows sum to 1',
        "```",
        "",
        "or with transformers alone (TensorFlow, `TF_USE_LEGACY_KERAS=1`):",
        "",
        "```python",
        "from transformers import AutoTokenizer, TFAutoModelForSequenceClassification",
        "",
        f'model = TFAutoModelForSequenceClassification.from_pretrained("{run_dir.name}")',
        f'tokenizer = AutoTokenizer.from_pretrained("{run_dir.name}")',
        "```",
        "",
        f"Trained with TensorFlow {run['environment'].get('tensorflow')} and transformers "
        f"{run['environment'].get('transformers')} on {run['environment'].get('platform')}; {run['created']}.",
        "",
    ]
    path = run_dir / "README.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
