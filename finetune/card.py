"""The fine-tuned side's sections of the model card (`README.md`) saved with every run; see `core.card`."""

from __future__ import annotations

from pathlib import Path

from core import card
from core.record import RunRecord

FRONT_MATTER = [
    "library_name: transformers",
    "pipeline_tag: text-classification",
    "tags: [tensorflow, text-classification]",
]


def render_card(record: RunRecord, run_dir: Path) -> str:
    """The card's Markdown from the run's record: the shared sections plus the checkpoint and transformers loading."""
    model, kind = record.model, record.kind
    task = record.data.options.get("task") or record.data.options.get("train_file")
    pairs = " on text pairs" if record.has_pairs else ""
    return card.render_card(
        record,
        title=f"{model.name} fine-tuned on {task}",
        intro=f"A `{model.architecture or 'sequence classification'}` model fine-tuned from "
        f"`{model.source}` {card.carded(kind).purpose.format(n=len(record.labels))}{pairs}.",
        model=[
            f"- Pretrained checkpoint `{model.name}` ({model.source}), a new head for the task "
            f"(transformers' `problem_type` {kind.name})",
            "- AdamW with linear warmup and linear decay; early stopping on validation "
            f"{kind.headline.replace('_', '-')}",
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


def write_card(run_dir: Path, record: RunRecord) -> Path:
    """Writes `run_dir/README.md`."""
    return card.write_card(run_dir, render_card(record, Path(run_dir)))
