"""Self-pretraining (`python -m scratch --self-pretrain`): the from-scratch encoder first learns masked language
modelling (`scratch.masked_lm`) on the run's own texts, then the classifier built on it is fine-tuned on the task.

Krishna et al. 2023 ("Downstream datasets make surprisingly good pretraining corpora") pretrain on the downstream
data alone and come close to pretraining on BookWiki; here the corpus is every input of the train split as the
classifier reads it (a pair as `text [SEP] text_pair`), and each text of `--unlabeled-file` (a .txt with one text
per line, or a table with the run's text column, read by `core.tables`). The tokenizer is built on that corpus.

Pretraining has a budget of its own, in passes over its texts (`--pretrain-epochs`, or `--pretrain-steps`) and
minutes (`--pretrain-time-budget`), whichever ends first; fine-tuning then trains on the run's own budget, as a plain
run does, so that a model is compared after it has learned the objective rather than after a share of the plain
run's steps. Every `--pretrain-log-steps` steps it validates the masked-LM model on the validation split's texts
(masked once, seeded, at least one piece per text), logs the loss and accuracy (`pretraining.jsonl`) and backs up its
model and optimizer (`pretraining_backup/`, Keras `BackupAndRestore`; `scratch.masked_lm.pretrain`), so `--resume`
continues an interrupted pretraining where its last backup left it, and a run interrupted while fine-tuning finds its
pretraining done.
run.json's `pretraining` section records it (docs/formats.md).
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from core.tasks import TASKS
from scratch.args import ScratchArguments

if TYPE_CHECKING:
    from core.args import DataArguments

logger = logging.getLogger(__name__)

# Passes over the pretraining texts by default: on 6,000 SST-2 texts the masked-LM validation loss is at its lowest
# after about 4 passes; on GoEmotions' 43,410 it still falls slowly after 7 (docs/results.md, "Budgets that let each
# model finish"), where `compare run --profile quick` adds a clock of 4 minutes.
PRETRAIN_EPOCHS = 10.0


@dataclass
class PretrainingArguments:
    """Self-pretraining options: masked language modelling on the run's own texts before fine-tuning."""

    _argument_group_name = "self-pretraining options"

    self_pretrain: bool = field(
        default=False,
        metadata={
            "help": "First pretrain the encoder with masked language modelling on the train split's texts (and "
            "--unlabeled-file), then fine-tune it on the task, within the run's step budget."
        },
    )
    unlabeled_file: str | None = field(
        default=None,
        metadata={
            "help": "With --self-pretrain: more texts to pretrain on, a .txt with one text per line, or a .csv, "
            ".tsv, .json, .jsonl or .parquet file with the run's text column."
        },
    )
    pretrain_epochs: float = field(
        default=PRETRAIN_EPOCHS,
        metadata={"help": "With --self-pretrain: passes over the pretraining texts (fractions allowed: 0.5)."},
    )
    pretrain_steps: int | None = field(
        default=None,
        metadata={"help": "With --self-pretrain: optimizer steps of pretraining instead of --pretrain-epochs."},
    )
    pretrain_time_budget: float | None = field(
        default=None,
        metadata={
            "help": "With --self-pretrain: end pretraining after this many minutes (time before a --resume "
            "included), whatever --pretrain-epochs or --pretrain-steps planned."
        },
    )
    mask_rate: float = field(
        default=0.15, metadata={"help": "With --self-pretrain: the share of tokens hidden for the model to guess."}
    )
    pretrain_log_steps: int = field(
        default=200,
        metadata={
            "help": "With --self-pretrain: every N steps, validate the masked-LM model on the validation split's "
            "texts, log it and back up for --resume."
        },
    )

    def __post_init__(self) -> None:
        if not self.pretrain_epochs > 0:
            raise ValueError(f"--pretrain-epochs must be above 0 (such as 2 or 0.5), got {self.pretrain_epochs}.")
        if self.pretrain_steps is not None and self.pretrain_steps < 1:
            raise ValueError(f"--pretrain-steps must be at least 1, got {self.pretrain_steps}.")
        if self.pretrain_time_budget is not None and not self.pretrain_time_budget > 0:
            raise ValueError(
                f"--pretrain-time-budget must be a number of minutes above 0, got {self.pretrain_time_budget}."
            )
        if not 0 < self.mask_rate < 1:
            raise ValueError(f"--mask-rate must be in (0, 1), got {self.mask_rate}.")
        if self.pretrain_log_steps < 1:
            raise ValueError(f"--pretrain-log-steps must be at least 1, got {self.pretrain_log_steps}.")
        defaults = {f.name: f.default for f in dataclasses.fields(PretrainingArguments)}
        given = [name for name, value in defaults.items() if name != "self_pretrain" and getattr(self, name) != value]
        if given and not self.self_pretrain:
            flags = ", ".join(f"--{name.replace('_', '-')}" for name in given)
            raise ValueError(f"{flags} only apply with --self-pretrain; add it, or leave them out.")

    def planned_steps(self, pass_steps: int) -> int:
        """Pretraining's optimizer steps: `--pretrain-steps`, else `--pretrain-epochs` passes of `pass_steps` steps.

        >>> PretrainingArguments(self_pretrain=True, pretrain_epochs=1.5).planned_steps(100)
        150
        """
        return self.pretrain_steps or max(1, math.ceil(self.pretrain_epochs * pass_steps))


@dataclass
class SelfPretrainedArguments(ScratchArguments, PretrainingArguments):
    """The model options of the self-pretrained side (`core.sides`, `scratch-pretrained`) in one class, as compare
    checks and records a side's flags: the from-scratch model's and self-pretraining's."""

    def __post_init__(self) -> None:
        ScratchArguments.__post_init__(self)
        PretrainingArguments.__post_init__(self)


def check_pretraining(args: ScratchArguments, options: PretrainingArguments) -> None:
    """The model options self-pretraining refuses, and a `--pretrain-steps` the step budget has no room for, named
    before the run directory is made."""
    from core.tables import DataError  # (pandas: not for --help)

    if args.causal:
        raise DataError("--self-pretrain teaches an encoder to fill in hidden words; it does not go with --causal.")
    if args.teacher:
        raise DataError("--self-pretrain does not combine with --teacher yet; leave one of them out.")


def text_columns(data_args: DataArguments) -> list[str]:
    """The columns an unlabelled table's texts are read from: `--text-column`, else the named task's, else `text`;
    and the second text's column (`--text-pair-column` or the task's) when the table has it."""
    spec = TASKS.get(data_args.task) if data_args.task else None
    columns = list(data_args.text_column or (spec.mirror_columns.text if spec else ["text"]))
    pair = data_args.text_pair_column or (spec.mirror_columns.text_pair if spec else None)
    return [*columns, *([pair] if pair else [])]


def read_unlabeled(path: str | Path, columns: Sequence[str]) -> list[str]:
    """The texts of an unlabelled file: each non-empty line of a .txt; each row's text in `columns[0]` (or several
    text columns, joined with a space) of a table, and its second text when `columns` names a pair column it has.

    Raises:
        DataError: the file is missing or empty, has none of the text columns, or holds no text.
    """
    from core.tables import DataError, check_file, read_table, read_text  # (pandas: not for --help)

    path = Path(path)
    what = "--unlabeled-file"
    try:
        check_file(path, what)
    except DataError as error:
        raise DataError(f"{error} Give a .txt with one text per line, or a table with a text column.") from None
    if path.suffix.lower() == ".txt":
        texts = [line.strip() for line in read_text(path).splitlines() if line.strip()]
    else:
        frame = read_table(path)
        present = [str(c) for c in frame.columns]
        found = [c for c in columns if c in present]
        if not found or columns[0] not in present:
            raise DataError(
                f"{what} {path} has no text column {columns[0]!r}; its columns are {', '.join(present)}. Name the "
                "column in the file so, or choose it with --text-column."
            )
        texts = []
        for _, row in frame[found].iterrows():
            texts += [str(value).strip() for value in row if isinstance(value, str) and value.strip()]
    if not texts:
        raise DataError(f"{what} {path} holds no text; give a file with at least one non-empty text, or leave it out.")
    return texts
