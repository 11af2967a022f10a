"""The model card (`README.md`) of a run directory, written from its run.json record.

The shared sections (data, training, validation, loading through `core.classifier`, or `core.translator` for a
translation run) are written here; each kind of run adds a title, an introduction, a model section and its own
loading notes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.record import RunRecord
from core.tasks import TRANSLATION

CARD_FILE = "README.md"


def render_card(
    record: RunRecord,
    title: str,
    intro: str,
    model: list[str],
    usage: list[str],
    front_matter: list[str] | None = None,
) -> str:
    """The card's Markdown.

    Args:
        record: the run's record.
        title: the card's heading.
        intro: a paragraph saying what was trained.
        model: the side's lines of the `Model` section.
        usage: the side's lines after the shared `core.classifier` example.
        front_matter: YAML lines for the hub's metadata block, if any.
    """
    data, training, env = record.data, record.training, record.environment
    options, validation = data.options, record.validation
    if record.task_kind == TRANSLATION:
        columns = ["loss", "val_loss", "val_accuracy", "val_chrf", "train_seconds"]
        what = f"Sentence pairs, `{data.columns['source']}` to `{data.columns['target']}`, each side"
        unit = "sentence pairs"
        rows = "source, target[, domain]"
        scores = (
            f"BLEU {validation['bleu']:.2f}, chrF++ {validation['chrf']:.2f} (sacreBLEU, beam {validation['beam']})"
        )
        example = [
            "from core.translator import load",
            "",
            'model = load("path/to/this/run")',
            'model.translate(["O Tom pode falar francês também."])  # a list of str',
        ]
    else:
        columns, what, rows, scores, example = _classifier_sections(record)
        unit = "examples"
    lines = ["---", *front_matter, "---", ""] if front_matter else []
    lines += [f"# {title}", "", intro, ""]
    lines += [
        "## Data",
        "",
        f"Source: {data.source or '?'}. {what}, cut at {options.get('max_length', '?')} tokens.",
        "",
        f"| split | rows | sha256 of ({rows}) rows |",
        "|---|---|---|",
        *(f"| {split} | {rows:,} | `{data.fingerprints.get(split, '')}` |" for split, rows in data.splits.items()),
        "",
        "## Model",
        "",
        *model,
        f"- Parameters: {record.model.params:,} ({record.model.trainable_params:,} trainable)",
        "",
        "## Training",
        "",
        f"{training.epochs_run} epoch(s), {training.seconds:.0f} s of training "
        f"({training.examples_per_second:.1f} {unit}/s); best epoch {training.best_epoch}.",
        "",
        "| epoch | " + " | ".join(columns) + " |",
        "|---|" + "---|" * len(columns),
        *(
            f"| {row['epoch']} | " + " | ".join(_cell(row.get(c), c) for c in columns) + " |"
            for row in training.history
        ),
        "",
        "| hyperparameter | value |",
        "|---|---|",
        *(f"| `{key}` | {value} |" for key, value in sorted(record.hyperparameters.items())),
        "",
        "## Validation metrics",
        "",
        f"{scores} on the validation split ({data.splits.get('validation', 0):,} rows).",
        "",
        "## How to load it",
        "",
        "```python",
        *example,
        "```",
        "",
        *usage,
        "",
        f"Trained with TensorFlow {env.get('tensorflow')} on {env.get('platform')}; {record.created or ''}.",
        "",
    ]
    return "\n".join(lines)


def _classifier_sections(record: RunRecord) -> tuple[list[str], str, str, str, list[str]]:
    """A classification (or regression) run's history columns, data line, fingerprinted row, scores and example, by
    its kind of problem (`core.kinds`) and whether it reads text pairs."""
    kind, labels, pair = record.kind, record.labels, record.data.text_pair_column
    columns = ["loss", "val_loss", kind.monitor, "train_seconds"]
    what = kind.card_data(labels) + (f". Text pairs (second text from `{pair}`)" if pair else ". Texts")
    rows = f"text, {'text_pair, ' if pair else ''}label"
    scores = kind.card_scores(record.validation, labels, record.thresholds)
    inputs = '["A man plays a guitar."], ["Someone plays music."]' if pair else '["a gripping, funny film"]'
    example = [
        "from core.classifier import load",
        "",
        'model = load("path/to/this/run")',
        f"model.{kind.card_example(inputs, labels)}",
    ]
    return columns, what, rows, scores, example


def _cell(value: Any, column: str) -> str:
    """A history value: seconds to 0.1, chrF++ (0-100) to 0.01, losses and accuracies to 4 decimals; missing: a dash."""
    if value is None:
        return "–"
    decimals = {"train_seconds": 1, "val_chrf": 2}.get(column, 4)
    return f"{value:.{decimals}f}"


def write_card(run_dir: str | Path, markdown: str) -> Path:
    """Writes `run_dir/README.md`."""
    path = Path(run_dir) / CARD_FILE
    path.write_text(markdown, encoding="utf-8")
    return path
