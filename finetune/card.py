"""The fine-tuned side's sections of the model card (`README.md`) saved with every run; see `core.card`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core import card
from core.tasks import HEADLINE_METRICS, MULTI_LABEL, REGRESSION, SINGLE_LABEL

PURPOSES = {
    SINGLE_LABEL: "to tell apart {n} classes",
    MULTI_LABEL: "to choose any of {n} labels",
    REGRESSION: "to predict a value",
}

FRONT_MATTER = [
    "library_name: transformers",
    "pipeline_tag: text-classification",
    "tags: [tensorflow, text-classification]",
]


def render_card(run: dict[str, Any], run_dir: Path) -> str:
    """The card's Markdown from the run's record: the shared sections plus the checkpoint and transformers loading."""
    model, data = run["model"], run["data"]
    task = data["options"].get("task") or data["options"].get("train_file")
    problem = data.get("problem_type") or SINGLE_LABEL
    pairs = " on text pairs" if data.get("text_pair_column") else ""
    return card.render_card(
        run,
        title=f"{model['name']} fine-tuned on {task}",
        intro=f"A `{model.get('architecture', 'sequence classification')}` model fine-tuned from "
        f"`{model['source']}` {PURPOSES[problem].format(n=len(data['labels']))}{pairs}.",
        model=[
            f"- Pretrained checkpoint `{model['name']}` ({model['source']}), a new head for the task "
            f"(transformers' `problem_type` {problem})",
            "- AdamW with linear warmup and linear decay; early stopping on validation "
            f"{HEADLINE_METRICS[problem].replace('_', '-')}",
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
