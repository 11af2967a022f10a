"""The model card (`README.md`) of a run directory, written from its run.json record.

The shared sections (data, training, validation, loading through `core.classifier`, or `core.translator` for a
translation run) are written here; each kind of run adds a title, an introduction, a model section and its own
loading notes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from core.kinds import MultiLabel, Regression, SingleLabel
from core.kinds.views import KindView, Views
from core.record import RunRecord
from core.task_kinds import Classification, Translation

CARD_FILE = "README.md"


class CardedKind(KindView):
    """What the model card says of one kind of task. Subclasses set the class attributes and override what differs.

    Attributes:
        noun: what a model of the kind is ("A Transformer text classifier").
        purpose: what a model is fine-tuned for, of n labels ("to tell apart {n} classes").
        data_line: the data line: what a row's label is, with the `labels` listed.
        call: the `model.<call>` line of loading through `core.classifier`, on `inputs`, with the shape it gives (n
            labels).
    """

    noun: ClassVar[str] = "text classifier"
    purpose: ClassVar[str] = "to tell apart {n} classes"
    data_line: ClassVar[str] = "Labels: {labels}"
    call: ClassVar[str] = "predict_proba({inputs})  # (1, {n}), rows sum to 1"

    def scores(self, validation: dict[str, float], labels: list[str], thresholds: list[float] | None) -> str:
        """The card's validation line."""
        return ", ".join(f"{name} {value:.4f}" for name, value in validation.items())


VIEWS: Views[CardedKind] = Views("the model card", "core.card")
register = VIEWS.register
carded = VIEWS.of


@register(SingleLabel)
class CardedSingleLabel(CardedKind):
    def scores(self, validation: dict[str, float], labels: list[str], thresholds: list[float] | None) -> str:
        return f"Accuracy {validation['accuracy']:.4f}, macro-F1 {validation['macro_f1']:.4f}"


@register(MultiLabel)
class CardedMultiLabel(CardedKind):
    noun = "multi-label text classifier"
    purpose = "to choose any of {n} labels"
    data_line = "Labels (several per text): {labels}"
    call = "predict_proba({inputs})  # (1, {n}), each label's probability"

    def scores(self, validation: dict[str, float], labels: list[str], thresholds: list[float] | None) -> str:
        chosen = ", ".join(f"`{label}` {t:.4f}" for label, t in zip(labels, thresholds, strict=True))
        scores = ", ".join(f"{name} {value:.4f}" for name, value in validation.items())
        return f"{scores} (each label chosen at its threshold, chosen on validation: {chosen})"


@register(Regression)
class CardedRegression(CardedKind):
    noun = "text regression model"
    purpose = "to predict a value"
    data_line = "Values (regression)"
    call = "predict_values({inputs})  # (1,)"


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
    options = data.options
    columns, what, unit, rows, scores, example = TASK_SECTIONS[type(record.task)](record)
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


def _translation_sections(record: RunRecord) -> tuple[list[str], str, str, str, str, list[str]]:
    """A translation run's history columns, data line, what its rows are, its fingerprinted row, scores and
    example."""
    columns, validation = record.data.columns, record.validation
    scores = f"BLEU {validation['bleu']:.2f}, chrF++ {validation['chrf']:.2f} (sacreBLEU, beam {validation['beam']})"
    example = [
        "from core.translator import load",
        "",
        'model = load("path/to/this/run")',
        'model.translate(["O Tom pode falar francês também."])  # a list of str',
    ]
    return (
        ["loss", "val_loss", "val_accuracy", "val_chrf", "train_seconds"],
        f"Sentence pairs, `{columns['source']}` to `{columns['target']}`, each side",
        "sentence pairs",
        "source, target[, domain]",
        scores,
        example,
    )


def _classifier_sections(record: RunRecord) -> tuple[list[str], str, str, str, str, list[str]]:
    """A classification (or regression) run's history columns, data line, what its rows are, its fingerprinted row,
    scores and example, by its kind of problem (`core.kinds`) and whether it reads text pairs."""
    kind, labels, pair = record.kind, record.labels, record.data.text_pair_column
    card = carded(kind)
    columns = ["loss", "val_loss", kind.monitor, "train_seconds"]
    what = card.data_line.format(labels=", ".join(f"`{label}`" for label in labels)) + (
        f". Text pairs (second text from `{pair}`)" if pair else ". Texts"
    )
    rows = f"text, {'text_pair, ' if pair else ''}label"
    scores = card.scores(record.validation, labels, record.thresholds)
    inputs = '["A man plays a guitar."], ["Someone plays music."]' if pair else '["a gripping, funny film"]'
    example = [
        "from core.classifier import load",
        "",
        'model = load("path/to/this/run")',
        "model." + card.call.format(inputs=inputs, n=len(labels)),
    ]
    return columns, what, "examples", rows, scores, example


# The card's sections that differ by task (`core.task_kinds`), by the task's class.
TASK_SECTIONS = {Classification: _classifier_sections, Translation: _translation_sections}


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
