"""The model card (`README.md`) of a run directory, written from its run.json record.

The shared sections (data, training, validation, loading through `core.classifier`) are written here;
each side adds a title, an introduction, a model section and its own loading notes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

CARD_FILE = "README.md"


def render_card(
    record: dict[str, Any],
    title: str,
    intro: str,
    model: list[str],
    usage: list[str],
    front_matter: list[str] | None = None,
) -> str:
    """The card's Markdown.

    Args:
        record: the run.json record.
        title: the card's heading.
        intro: a paragraph saying what was trained.
        model: the side's lines of the `Model` section.
        usage: the side's lines after the shared `core.classifier` example.
        front_matter: YAML lines for the hub's metadata block, if any.
    """
    data, training, env = record["data"], record["training"], record.get("environment", {})
    options = data.get("options", {})
    lines = ["---", *front_matter, "---", ""] if front_matter else []
    lines += [f"# {title}", "", intro, ""]
    lines += [
        "## Data",
        "",
        f"Source: {data.get('source', '?')}. Labels: " + ", ".join(f"`{label}`" for label in data["labels"]) + ". "
        f"Texts cut at {options.get('max_length', '?')} tokens.",
        "",
        "| split | rows | sha256 of (text, label) rows |",
        "|---|---|---|",
        *(
            f"| {split} | {rows:,} | `{data['fingerprints'].get(split, '')}` |"
            for split, rows in data["splits"].items()
        ),
        "",
        "## Model",
        "",
        *model,
        f"- Parameters: {record['model']['params']:,} ({record['model']['trainable_params']:,} trainable)",
        "",
        "## Training",
        "",
        f"{training['epochs_run']} epoch(s), {training['seconds']:.0f} s of training "
        f"({training['examples_per_second']:.1f} examples/s); best epoch {training['best_epoch']}.",
        "",
        "| epoch | loss | val_loss | val_accuracy | train_seconds |",
        "|---|---|---|---|---|",
        *(
            f"| {row['epoch']} | {row['loss']:.4f} | {row['val_loss']:.4f} | {row['val_accuracy']:.4f} "
            f"| {row['train_seconds']:.1f} |"
            for row in training["history"]
        ),
        "",
        "| hyperparameter | value |",
        "|---|---|",
        *(f"| `{key}` | {value} |" for key, value in sorted(record["hyperparameters"].items())),
        "",
        "## Validation metrics",
        "",
        f"Accuracy {record['validation']['accuracy']:.4f}, macro-F1 {record['validation']['macro_f1']:.4f} "
        f"on the validation split ({data['splits'].get('validation', 0):,} rows).",
        "",
        "## How to load it",
        "",
        "```python",
        "from core.classifier import load",
        "",
        'model = load("path/to/this/run")',
        f'model.predict_proba(["a gripping, funny film"])  # (1, {len(data["labels"])}), rows sum to 1',
        "```",
        "",
        *usage,
        "",
        f"Trained with TensorFlow {env.get('tensorflow')} on {env.get('platform')}; {record.get('created', '')}.",
        "",
    ]
    return "\n".join(lines)


def write_card(run_dir: str | Path, markdown: str) -> Path:
    """Writes `run_dir/README.md`."""
    path = Path(run_dir) / CARD_FILE
    path.write_text(markdown, encoding="utf-8")
    return path
