"""Argument dataclasses shared by every command: the data (a classification or a translation task), the run
directory, the training budget and the serving export. `core.parsing` parses command lines into them.

This module and the options modules of the sides and of compare import no TensorFlow, so `--help` and a refused
option answer at once.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

from core import kinds
from core.errors import UserError
from core.kinds import MULTI_LABEL, SINGLE_LABEL
from core.long_text import CHUNKS, DEFAULT_MAX_CHUNKS, HEAD_TAIL, POOLINGS, READINGS, Reading
from core.tasks import DATA_DIR_ENV, PAIR_TASKS, TASKS, find_data_dir
from core.training.budget import CLASS_WEIGHTS, TrainingPlan, plan_training

STRATEGIES = ("default", "mirrored", "multiworker")
SPECIAL_PLACES = 2  # the window's places taken by [CLS] and [SEP] on the fine-tuned side, outside the text's pieces

# The help of the data options both kinds of task take alike, so that a command taking both lists them once.
VALIDATION_FILE_HELP = "Validation data; when absent, 10%% of train is held out (seeded; by label for a single label)."
TEST_FILE_HELP = "Test data; when absent, 10%% of train is held out (seeded; by label for a single label)."
MAX_TRAIN_SAMPLES_HELP = "Train on a seeded subset of this many rows (stratified by label for a single label)."
MAX_LENGTH_HELP = "Texts are cut to this many tokens (a translation's source and target each)."
VERBOSE_HELP = "Also show TensorFlow's start-up notices and the libraries' warnings."
SEED_HELP = "Seed for splitting, subsetting, initialisation and shuffling."
DATA_DIR_HELP = (
    f"Folder of local task mirrors (<dir>/<task>/train.csv or .tsv ...); default ${DATA_DIR_ENV}, else "
    "../shared/data or ./data beside the project, else the Hugging Face hub."
)


@dataclass
class DataArguments:
    """Which task to train on and how to cut it. Both sides and every compare command take these."""

    _argument_group_name = "data options"

    task: str | None = field(
        default=None,
        metadata={"help": "A named task (classification or regression). Or use --train-file.", "choices": tuple(TASKS)},
    )
    train_file: str | None = field(
        default=None, metadata={"help": "Your own training data: .csv, .tsv, .json, .jsonl or .parquet."}
    )
    validation_file: str | None = field(default=None, metadata={"help": VALIDATION_FILE_HELP})
    test_file: str | None = field(default=None, metadata={"help": TEST_FILE_HELP})
    text_column: list[str] | None = field(
        default=None,
        metadata={"help": "Text column(s) of your files (default: text); several are joined with a space."},
    )
    text_pair_column: str | None = field(
        default=None,
        metadata={
            "help": "The column of each example's second text: a pair task (paraphrase, entailment, similarity)."
        },
    )
    label_column: str | None = field(default=None, metadata={"help": "Label column of your files (default: label)."})
    problem: str | None = field(
        default=None,
        metadata={  # no `choices`: a kind registered after this module loads is a choice too (checked below)
            "help": f"The kind of labels (transformers' problem_type): {', '.join(kinds.names())}. Default: the "
            f"task's; for files {SINGLE_LABEL}, or {MULTI_LABEL} with --label-columns.",
        },
    )
    label_separator: str = field(
        default=";",
        metadata={"help": "Multi-label: the character between a row's labels (names or ids) in the label column."},
    )
    label_columns: list[str] | None = field(
        default=None,
        metadata={
            "help": "Multi-label: one 0/1 column per label (a b c, or a,b,c), named as the labels; not with --label-column."
        },
    )
    labels_file: str | None = field(
        default=None,
        metadata={"help": "Class names, one per line, in label-id order (default: the sorted label values)."},
    )
    data_dir: str | None = field(default=None, metadata={"help": DATA_DIR_HELP})
    max_train_samples: int | None = field(default=None, metadata={"help": MAX_TRAIN_SAMPLES_HELP})
    max_length: int = field(default=128, metadata={"help": MAX_LENGTH_HELP})
    long_text: str = field(
        default=HEAD_TAIL,
        metadata={
            "help": "How a text longer than --max-length is read: its head; its first quarter and last three "
            "quarters (head-tail); or overlapping windows over the whole text, pooled into one answer (chunks).",
            "choices": READINGS,
        },
    )
    stride: int | None = field(
        default=None,
        metadata={"help": "With chunks: pieces shared by consecutive windows (default: a quarter of the window)."},
    )
    max_chunks: int = field(
        default=DEFAULT_MAX_CHUNKS,
        metadata={"help": "With chunks: windows at most per text; more are spread evenly over the whole text."},
    )
    chunk_pooling: str = field(
        default="mean",
        metadata={
            "help": "With chunks: how the windows' logits become the text's (regression: the mean).",
            "choices": POOLINGS,
        },
    )
    train_chunks: bool = field(
        default=False,
        metadata={"help": "With chunks: train on every window of a text, each with its label (default: head-tail)."},
    )
    seed: int = field(default=42, metadata={"help": SEED_HELP})

    def __post_init__(self) -> None:
        check_data_source(self, min_train_samples=2)
        self._check_reading()
        if self.text_column is not None:
            if not self.text_column:
                raise ValueError("--text-column needs at least one column name.")
            repeated = sorted({c for c in self.text_column if self.text_column.count(c) > 1})
            if repeated:
                raise ValueError(f"--text-column names {repeated[0]!r} more than once; give each column once.")
        if self.text_pair_column is not None and self.text_pair_column in (self.text_column or ["text"]):
            raise ValueError(
                f"--text-pair-column {self.text_pair_column!r} is also a --text-column; the two texts of a pair come "
                "from two different columns."
            )
        self._check_labels()
        self.problem = self._resolve_problem()

    def _check_reading(self) -> None:
        if self.long_text not in READINGS:
            raise ValueError(f"--long-text must be one of {', '.join(READINGS)}, got {self.long_text!r}.")
        if self.chunk_pooling not in POOLINGS:
            raise ValueError(f"--chunk-pooling must be one of {', '.join(POOLINGS)}, got {self.chunk_pooling!r}.")
        if self.max_chunks < 1:
            raise ValueError(f"--max-chunks must be at least 1 window per text, got {self.max_chunks}.")
        window = self.max_length - SPECIAL_PLACES
        if self.stride is not None and not 0 <= self.stride < window:
            raise ValueError(
                f"--stride {self.stride} must be at least 0 and smaller than the window's {window} pieces of text "
                f"(--max-length {self.max_length}, less {SPECIAL_PLACES} for [CLS] and [SEP]); give a smaller "
                "--stride or a larger --max-length."
            )
        spec = TASKS.get(self.task) if self.task is not None else None
        pairs = self.text_pair_column is not None or (spec is not None and spec.hub_columns.text_pair is not None)
        if pairs and self.long_text == CHUNKS:
            raise ValueError(
                "--long-text chunks reads one text in windows; a pair task's two texts are read together, cut as "
                "with head-tail. Use --long-text head-tail or head."
            )
        if self.train_chunks and self.long_text != CHUNKS:
            raise ValueError(f"--train-chunks goes with --long-text chunks, not {self.long_text}; add that or drop it.")

    @property
    def reading(self) -> Reading:
        """The `--long-text` options as one object (`core.long_text.Reading`)."""
        return Reading.of(self.to_dict())

    def _check_labels(self) -> None:
        if self.problem is not None and self.problem not in kinds.KINDS:
            raise ValueError(f"--problem must be one of {', '.join(kinds.KINDS)}, got {self.problem!r}.")
        if not self.label_separator:
            raise ValueError("--label-separator must be at least one character, such as ; or |.")
        if self.label_columns is None:
            return
        # "a,b,c" and "a b c" both name three columns
        self.label_columns = [name.strip() for names in self.label_columns for name in names.split(",") if name.strip()]
        if self.label_column is not None:
            raise ValueError(
                "--label-columns and --label-column contradict each other: give one 0/1 column per label with "
                "--label-columns, or one column of labels with --label-column."
            )
        if self.problem is not None and not kinds.get(self.problem).reads_label_columns:
            raise ValueError(
                f"--label-columns gives multi-label data (one 0/1 column per label), but --problem is {self.problem}; "
                f"drop --problem or pass --problem {MULTI_LABEL}."
            )
        if len(self.label_columns) < 2:
            raise ValueError(
                f"--label-columns needs at least two columns, got {len(self.label_columns)}; for one 0/1 column use "
                "--label-column with the default single-label problem."
            )
        repeated = sorted({c for c in self.label_columns if self.label_columns.count(c) > 1})
        if repeated:
            raise ValueError(f"--label-columns names {repeated[0]!r} more than once; give each column once.")
        if self.labels_file is not None:
            raise ValueError(
                "--labels-file goes with --label-column; with --label-columns the columns name the labels."
            )
        if self.text_pair_column in self.label_columns or set(self.text_column or ["text"]) & set(self.label_columns):
            raise ValueError("--label-columns names a text column; the label columns hold only 0 and 1.")

    def _resolve_problem(self) -> str:
        """The problem given, else the task's, else multi-label for --label-columns, else single label."""
        spec = TASKS.get(self.task) if self.task is not None else None
        if spec is None:  # files, or an unknown task (refused when the data is loaded)
            kind = kinds.get(self.problem) if self.problem is not None else None
            if kind is not None and not kind.has_labels and self.labels_file is not None:
                raise ValueError(f"--labels-file names classes; a {kind.title} task has none. Drop it or --problem.")
            return self.problem or (MULTI_LABEL if self.label_columns else SINGLE_LABEL)
        if self.problem not in (None, spec.problem):
            raise ValueError(
                f"Task {spec.name!r} is {spec.problem}, not {self.problem}; drop --problem "
                "(a named task has its own kind)."
            )
        for flag, value in (("--text-pair-column", self.text_pair_column), ("--label-columns", self.label_columns)):
            if value is not None:
                raise ValueError(f"{flag} goes with --train-file; task {spec.name!r} has its own columns.")
        return spec.problem

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def check_data_source(args: Any, min_train_samples: int) -> None:
    """The checks every data-arguments class shares (classification's and translation's): one of --task or
    --train-file, split files only with --train-file, the sizes in range; fills `data_dir` when it is not given
    (`core.tasks.find_data_dir`: $TEXTCLS_DATA_DIR, else a mirror folder beside the project)."""
    if (args.task is None) == (args.train_file is None):
        raise ValueError("Give exactly one of --task NAME or --train-file FILE.")
    if args.task is not None and (args.validation_file or args.test_file):
        raise ValueError("--validation-file/--test-file go with --train-file, not with --task.")
    if args.max_train_samples is not None and args.max_train_samples < min_train_samples:
        raise ValueError(f"--max-train-samples must be at least {min_train_samples}, got {args.max_train_samples}.")
    if not 2 <= args.max_length <= 4096:
        raise ValueError(f"--max-length must be between 2 and 4096 tokens, got {args.max_length}.")
    if args.data_dir is None:
        args.data_dir = find_data_dir()


@dataclass
class PairDataArguments:
    """Which parallel text to train on and how to cut it."""

    _argument_group_name = "data options"

    task: str | None = field(
        default=None, metadata={"help": "A named translation task. Or use --train-file.", "choices": tuple(PAIR_TASKS)}
    )
    train_file: str | None = field(
        default=None, metadata={"help": "Your own sentence pairs: .tsv (no quoting), .csv, .json, .jsonl or .parquet."}
    )
    validation_file: str | None = field(default=None, metadata={"help": VALIDATION_FILE_HELP})
    test_file: str | None = field(default=None, metadata={"help": TEST_FILE_HELP})
    source_column: str | None = field(default=None, metadata={"help": "Column of the sentences to translate."})
    target_column: str | None = field(default=None, metadata={"help": "Column of their reference translations."})
    domain_column: str | None = field(
        default=None, metadata={"help": "Optional column naming each pair's domain, for per-domain scores."}
    )
    data_dir: str | None = field(default=None, metadata={"help": DATA_DIR_HELP})
    max_train_samples: int | None = field(default=None, metadata={"help": MAX_TRAIN_SAMPLES_HELP})
    max_length: int = field(default=128, metadata={"help": MAX_LENGTH_HELP})
    seed: int = field(default=42, metadata={"help": SEED_HELP})

    def __post_init__(self) -> None:
        check_data_source(self, min_train_samples=1)
        if self.task is not None:
            if self.task not in PAIR_TASKS:
                raise ValueError(f"Unknown translation task {self.task!r}; known: {', '.join(PAIR_TASKS)}.")
            given = [k for k in ("source_column", "target_column", "domain_column") if getattr(self, k) is not None]
            if given:
                spec = PAIR_TASKS[self.task]
                raise ValueError(
                    f"{', '.join('--' + k.replace('_', '-') for k in given)} {'is' if len(given) == 1 else 'are'} "
                    f"for --train-file: --task {self.task} "
                    f"reads its own columns ({spec.source_column}, {spec.target_column}). Leave them out, or give "
                    "the files with --train-file."
                )
        elif not (self.source_column and self.target_column):
            raise ValueError("--train-file needs --source-column and --target-column.")
        columns = [c for c in (self.source_column, self.target_column, self.domain_column) if c]
        if len(set(columns)) != len(columns):
            raise ValueError(f"--source-column, --target-column and --domain-column must differ, got {columns}.")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class RunArguments:
    """Where a training run goes and what to do when something is already there."""

    _argument_group_name = "run options"

    output_dir: str = field(metadata={"help": "The run directory to write."})
    overwrite: bool = field(default=False, metadata={"help": "Replace an existing run directory."})
    resume: bool = field(default=False, metadata={"help": "Continue the unfinished run in OUTPUT_DIR.partial/."})
    strategy: str = field(default="default", metadata={"help": "tf.distribute strategy.", "choices": STRATEGIES})
    verbose: bool = field(default=False, metadata={"help": VERBOSE_HELP})

    def __post_init__(self) -> None:
        if self.overwrite and self.resume:
            raise ValueError("--overwrite and --resume contradict each other; choose one.")
        if self.strategy not in STRATEGIES:
            raise ValueError(f"--strategy must be one of {', '.join(STRATEGIES)}, got {self.strategy!r}.")


MAX_EPOCHS = 1000


def check_budget(epochs: int | None, max_steps: int | None) -> None:
    """Refuses `--epochs` outside 1..MAX_EPOCHS and `--max-steps` below 1 (None: not given), for every trainer."""
    if epochs is not None and not 1 <= epochs <= MAX_EPOCHS:
        raise ValueError(f"--epochs must be between 1 and {MAX_EPOCHS}, got {epochs}.")
    if max_steps is not None and max_steps < 1:
        raise ValueError(f"--max-steps must be at least 1, got {max_steps}.")


@dataclass
class BudgetArguments:
    """How long a model trains and how often it is validated: every trainer's options extend this.

    A budget is counted in optimizer steps; the epochs follow from the train size (`core.training.budget`). A time
    budget (`--time-budget`, minutes) ends training sooner when the clock runs out first.
    """

    DEFAULT_EPOCHS: ClassVar[int] = 3  # a trainer's epochs when neither --epochs nor --max-steps is given

    epochs: int | None = field(
        default=None,
        metadata={
            "help": "Most epochs to train (early stopping may end sooner). Default: the side's own, or with "
            "--max-steps as many as the budget takes; given with --max-steps, an upper bound."
        },
    )
    max_steps: int | None = field(
        default=None,
        metadata={"help": "Stop after this many optimizer steps in total, resumed steps included (mid-epoch)."},
    )
    min_steps: int = field(default=0, metadata={"help": "Early stopping may not stop before this many steps."})
    eval_steps: int | None = field(
        default=None,
        metadata={
            "help": "Validate (log a history row, back up for --resume, consider early stopping) every N optimizer "
            "steps instead of after every pass over the training data."
        },
    )
    time_budget: float | None = field(
        default=None,
        metadata={
            "help": "Stop training after this many minutes (fractions allowed: 0.5), validations and the time spent "
            "before a --resume included; the period under way is validated and the best validation kept."
        },
    )
    min_epochs: int = field(
        default=0,
        metadata={
            "help": "Early stopping may not stop before this many passes over the train split (nor --min-steps)."
        },
    )
    evals_per_epoch: int | None = field(
        default=None,
        metadata={
            "help": "Validate at least this many times a pass over the train split: every pass's steps / N, or every "
            "--eval-steps when that is more often."
        },
    )

    def __post_init__(self) -> None:
        check_budget(self.epochs, self.max_steps)
        if self.min_epochs < 0:
            raise ValueError(f"--min-epochs must be 0 or more, got {self.min_epochs}.")
        if self.evals_per_epoch is not None and self.evals_per_epoch < 1:
            raise ValueError(f"--evals-per-epoch must be at least 1, got {self.evals_per_epoch}.")
        if self.time_budget is not None and not self.time_budget > 0:
            raise ValueError(
                f"--time-budget must be a number of minutes above 0, such as 10 or 0.5; got {self.time_budget}."
            )
        if self.min_steps < 0:
            raise ValueError(f"--min-steps must be 0 or more, got {self.min_steps}.")
        if self.max_steps is not None and self.min_steps > self.max_steps:
            raise ValueError(
                f"--min-steps {self.min_steps} is more than --max-steps {self.max_steps}; "
                "the minimum must fit in the budget."
            )
        if self.eval_steps is not None and self.eval_steps < 1:
            raise ValueError(f"--eval-steps must be at least 1, got {self.eval_steps}.")

    def plan(self, steps_per_epoch: int) -> TrainingPlan:
        """The epochs and total optimizer steps of this budget on a train split of `steps_per_epoch` steps."""
        return plan_training(steps_per_epoch, self.DEFAULT_EPOCHS, self.max_steps, self.min_steps, self.epochs)

    def per_pass(self, steps_per_epoch: int) -> BudgetArguments:
        """These options with the bounds given in passes (`--min-epochs`, `--evals-per-epoch`) turned into optimizer
        steps on a train split of `steps_per_epoch` steps, as the run trains and records them: `min_steps` at least
        the passes' steps (within `--max-steps`), `eval_steps` at most a pass's share.

        >>> args = BudgetArguments(min_steps=100, eval_steps=300, min_epochs=1, evals_per_epoch=3)
        >>> resolved = args.per_pass(162); resolved.min_steps, resolved.eval_steps
        (162, 54)
        >>> resolved = args.per_pass(2100); resolved.min_steps, resolved.eval_steps
        (2100, 300)
        """
        min_steps = max(self.min_steps, self.min_epochs * steps_per_epoch)
        if self.max_steps is not None:
            min_steps = min(min_steps, self.max_steps)
        eval_steps = self.eval_steps
        if self.evals_per_epoch is not None:
            share = max(1, math.ceil(steps_per_epoch / self.evals_per_epoch))
            eval_steps = min(eval_steps, share) if eval_steps is not None else share
        return dataclasses.replace(self, min_steps=min_steps, eval_steps=eval_steps)


@dataclass
class ClassifierBudgetArguments(BudgetArguments):
    """The budget options, and how a classifier's loss weighs the classes; both classification sides extend this."""

    class_weight: str = field(
        default="none",
        metadata={
            "help": "none, or balanced: weigh each class in the loss by its inverse frequency in train.",
            "choices": CLASS_WEIGHTS,
        },
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.class_weight not in CLASS_WEIGHTS:
            raise ValueError(f"--class-weight must be one of {', '.join(CLASS_WEIGHTS)}, got {self.class_weight!r}.")


class OptionsError(UserError):
    """A command line or options file that names a bad value or an unknown option."""


@dataclass
class ExportArguments:
    """Which run to export and where (`python -m finetune export`, `python -m scratch export`; `core.export`)."""

    run_dir: str = field(
        metadata={"help": "The finished run to export (a directory holding run.json).", "positional": True}
    )
    output_dir: str = field(
        metadata={"help": "Where to write saved_model/, model_int8.tflite, labels.txt, export.json."}
    )
    overwrite: bool = field(default=False, metadata={"help": "Replace an existing export in --output-dir."})
    evaluate: bool = field(
        default=True, metadata={"help": "Do not score the exported variants on the run's test split (faster)."}
    )
    verbose: bool = field(
        default=False, metadata={"help": "Show TensorFlow's start-up notices and the converter's log."}
    )
