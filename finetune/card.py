"""The fine-tuned side's sections of the model card (`README.md`) saved with every run; see `core.card`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core import card

FRONT_MATTER = [
    "library_name: transformers",
    "pipeline_tag: text-classification",
    "tags: [tensorflow, text-classification]",
]


def render_card(run: dict[str, Any], run_dir: Path) -> str:
    """The card's Markdown from the run's record: the shared sections plus the checkpoint and transformers loading."""
    model, data = run["model"], run["data"]
    task = data["options"].get("task") or data["options"].get("train_file")
    return card.render_card(
        run,
        title=f"{model['name']} fine-tuned on {task}",
        intro=f"A `{model.get('architecture', 'sequence classification')}` model fine-tuned from "
        f"`{model['source']}` to tell apart {len(data['labels'])} classes.",
        model=[
            f"- Pretrained checkpoint `{model['name']}` ({model['source']}), a new classification head for the labels",
            "- AdamW with linear warmup and linear decay; early stopping on validation accuracy",
        ],
        usage=[
            "or with transformers alone (TensorFlow, `TF_USE_LEGACY_KERAS=1`):",
            "",
            "```python",
            "from transformers import AutoTokenizer, TFAutoModelForSequenceClassification",
            "",
            f'model = TFAutoModelForSequenceClassification.from_pretrained("{run_dir.name}")',
            f'tokenizer = AutoTokenizer.from_pretrained("{run_dir.name}")',
            "```",
        ],
        front_matter=FRONT_MATTER,
    )


def write_card(run_dir: Path, run: dict[str, Any]) -> Path:
    """Writes `run_dir/README.md`."""
    return card.write_card(run_dir, render_card(run, Path(run_dir)))
