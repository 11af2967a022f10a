"""Self-pretraining (`python -m scratch --self-pretrain`): the from-scratch encoder first learns masked language
modelling (`scratch.masked_lm`) on the run's own texts, then the classifier built on it is fine-tuned on the task.

Krishna et al. 2023 ("Downstream datasets make surprisingly good pretraining corpora") pretrain on the downstream
data alone and come close to pretraining on BookWiki; here the corpus is every input of the train split as the
classifier reads it (a pair as `text [SEP] text_pair`), and each text of `--unlabeled-file` (a .txt with one text
per line, or a table with the run's text column, read by `core.tables`). The tokenizer is built on that corpus.

The budget is shared: `--pretrain-steps N`, or by default `--pretrain-share` (half) of the run's optimizer steps
(`--max-steps`, else its planned epochs' steps), go to pretraining and the rest to fine-tuning, so that a
self-pretrained run costs as many steps as a plain one. Pretraining validates nothing; every `--pretrain-log-steps`
steps it logs the masked-LM loss and accuracy (`pretraining.jsonl`) and backs up its model and optimizer
(`pretraining_backup/`, Keras `BackupAndRestore`; `scratch.masked_lm.pretrain`), so `--resume` continues an interrupted
pretraining where its last backup left it, and a run interrupted while fine-tuning finds its pretraining done.
run.json's `pretraining` section records it (docs/formats.md).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from core.tasks import TASKS
from scratch.args import ScratchArguments

if TYPE_CHECKING:
    from core.args import DataArguments

logger = logging.getLogger(__name__)


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
    pretrain_steps: int | None = field(
        default=None,
        metadata={"help": "With --self-pretrain: optimizer steps of pretraining (default: --pretrain-share)."},
    )
    pretrain_share: float = field(
        default=0.5,
        metadata={
            "help": "With --self-pretrain: the share of the run's optimizer steps (--max-steps, else its planned "
            "epochs') spent pretraining; fine-tuning gets the rest."
        },
    )
    mask_rate: float = field(
        default=0.15, metadata={"help": "With --self-pretrain: the share of tokens hidden for the model to guess."}
    )
    pretrain_log_steps: int = field(
        default=100,
        metadata={"help": "With --self-pretrain: log the masked-LM loss and back up for --resume every N steps."},
    )

    def __post_init__(self) -> None:
        if self.pretrain_steps is not None and self.pretrain_steps < 1:
            raise ValueError(f"--pretrain-steps must be at least 1, got {self.pretrain_steps}.")
        if not 0 < self.pretrain_share < 1:
            raise ValueError(f"--pretrain-share must be in (0, 1), got {self.pretrain_share}.")
        if not 0 < self.mask_rate < 1:
            raise ValueError(f"--mask-rate must be in (0, 1), got {self.mask_rate}.")
        if self.pretrain_log_steps < 1:
            raise ValueError(f"--pretrain-log-steps must be at least 1, got {self.pretrain_log_steps}.")
        defaults = {f.name: f.default for f in dataclasses.fields(PretrainingArguments)}
        given = [name for name, value in defaults.items() if name != "self_pretrain" and getattr(self, name) != value]
        if given and not self.self_pretrain:
            flags = ", ".join(f"--{name.replace('_', '-')}" for name in given)
            raise ValueError(f"{flags} only apply with --self-pretrain; add it, or leave them out.")

    def split_budget(self, args: ScratchArguments, total_steps: int) -> tuple[int, ScratchArguments]:
        """(pretraining steps, the options fine-tuning trains with): the run's `total_steps` shared between the two,
        fine-tuning's `--max-steps` the rest and its `--min-steps` cut to fit."""
        from core.tables import DataError  # (pandas: not for --help)

        steps = self.pretrain_steps or max(1, round(self.pretrain_share * total_steps))
        rest = total_steps - steps
        if rest < 1:
            raise DataError(
                f"--pretrain-steps {steps} leaves none of the run's {total_steps} optimizer steps for fine-tuning; "
                f"give fewer, or a larger --max-steps."
            )
        return steps, dataclasses.replace(args, max_steps=rest, min_steps=min(args.min_steps, rest))


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

    if args.max_steps is not None and options.pretrain_steps is not None and options.pretrain_steps >= args.max_steps:
        raise DataError(
            f"--pretrain-steps {options.pretrain_steps} leaves none of --max-steps {args.max_steps} for fine-tuning; "
            "give fewer pretraining steps, or a larger --max-steps."
        )
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
