"""Argument dataclasses shared by every command, and the one parser they all go through."""

from __future__ import annotations

import dataclasses
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from core.budget import CLASS_WEIGHTS, TrainingPlan, plan_training
from core.errors import UserError
from core.tasks import DATA_DIR_ENV, MULTI_LABEL, PROBLEM_TYPES, REGRESSION, SINGLE_LABEL, TASKS, find_data_dir


@dataclass
class DataArguments:
    """Which task to train on and how to cut it. Both sides and every compare command take these."""

    task: str | None = field(
        default=None,
        metadata={"help": f"A named task ({', '.join(TASKS)}). Or use --train-file."},
    )
    train_file: str | None = field(
        default=None, metadata={"help": "Your own training data: .csv, .tsv, .json, .jsonl or .parquet."}
    )
    validation_file: str | None = field(
        default=None,
        metadata={"help": "Validation data; when absent, 10%% of train is held out (stratified for a single label)."},
    )
    test_file: str | None = field(
        default=None,
        metadata={"help": "Test data; when absent, 10%% of train is held out (stratified for a single label)."},
    )
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
        metadata={
            "choices": PROBLEM_TYPES,
            "help": f"The kind of labels (transformers' problem_type). Default: the task's; for files {SINGLE_LABEL}, "
            f"or {MULTI_LABEL} with --label-columns.",
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
    data_dir: str | None = field(
        default=None,
        metadata={
            "help": f"Folder of local task mirrors (<dir>/<task>/train.csv ...); default ${DATA_DIR_ENV}, else "
            "../shared/data or ./data beside the project, else the Hugging Face hub."
        },
    )
    max_train_samples: int | None = field(
        default=None,
        metadata={"help": "Train on a seeded subset of this many examples (stratified for a single label)."},
    )
    max_length: int = field(default=128, metadata={"help": "Texts are cut to this many tokens."})
    seed: int = field(default=42, metadata={"help": "Seed for splitting, subsetting, initialisation and shuffling."})

    def __post_init__(self) -> None:
        check_data_source(self, min_train_samples=2)
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

    def _check_labels(self) -> None:
        if self.problem is not None and self.problem not in PROBLEM_TYPES:
            raise ValueError(f"--problem must be one of {', '.join(PROBLEM_TYPES)}, got {self.problem!r}.")
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
        if self.problem not in (None, MULTI_LABEL):
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
            if self.problem == REGRESSION and self.labels_file is not None:
                raise ValueError("--labels-file names classes; a regression task has none. Drop it or --problem.")
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
class RunArguments:
    """Where a training run goes and what to do when something is already there."""

    output_dir: str = field(metadata={"help": "The run directory to write."})
    overwrite: bool = field(default=False, metadata={"help": "Replace an existing run directory."})
    resume: bool = field(default=False, metadata={"help": "Continue the unfinished run in OUTPUT_DIR.partial/."})
    strategy: str = field(
        default="default", metadata={"help": "tf.distribute strategy: default, mirrored or multiworker."}
    )
    verbose: bool = field(
        default=False, metadata={"help": "Also show TensorFlow's start-up notices and its library warnings."}
    )

    def __post_init__(self) -> None:
        if self.overwrite and self.resume:
            raise ValueError("--overwrite and --resume contradict each other; choose one.")
        if self.strategy not in ("default", "mirrored", "multiworker"):
            raise ValueError(f"--strategy must be default, mirrored or multiworker, got {self.strategy!r}.")


MAX_EPOCHS = 1000


def check_budget(epochs: int | None, max_steps: int | None) -> None:
    """Refuses `--epochs` outside 1..MAX_EPOCHS and `--max-steps` below 1 (None: not given), for every trainer."""
    if epochs is not None and not 1 <= epochs <= MAX_EPOCHS:
        raise ValueError(f"--epochs must be between 1 and {MAX_EPOCHS}, got {epochs}.")
    if max_steps is not None and max_steps < 1:
        raise ValueError(f"--max-steps must be at least 1, got {max_steps}.")


@dataclass
class BudgetArguments:
    """How long a side trains and how its loss weighs the classes; both sides' options extend this.

    A budget is counted in optimizer steps; the epochs follow from the train size (`core.budget`).
    """

    DEFAULT_EPOCHS: ClassVar[int] = 3  # a side's epochs when neither --epochs nor --max-steps is given

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
    class_weight: str = field(
        default="none",
        metadata={"help": "none, or balanced: weigh each class in the loss by its inverse frequency in train."},
    )

    def __post_init__(self) -> None:
        check_budget(self.epochs, self.max_steps)
        if self.min_steps < 0:
            raise ValueError(f"--min-steps must be 0 or more, got {self.min_steps}.")
        if self.max_steps is not None and self.min_steps > self.max_steps:
            raise ValueError(
                f"--min-steps {self.min_steps} is more than --max-steps {self.max_steps}; "
                "the minimum must fit in the budget."
            )
        if self.class_weight not in CLASS_WEIGHTS:
            raise ValueError(f"--class-weight must be one of {', '.join(CLASS_WEIGHTS)}, got {self.class_weight!r}.")

    def plan(self, steps_per_epoch: int) -> TrainingPlan:
        """The epochs and total optimizer steps of this budget on a train split of `steps_per_epoch` steps."""
        return plan_training(steps_per_epoch, self.DEFAULT_EPOCHS, self.max_steps, self.min_steps, self.epochs)


class OptionsError(UserError):
    """A command line or options file that names a bad value or an unknown option."""


def options_file_flags(argv: list[str]) -> list[str]:
    """A command line of one `.json` file as the flags that file holds; any other command line as it is.

    The file holds one object of option names (with `_` or `-`) and values: `{"task": "sst2", "max_length": 64,
    "names": ["a", "b"], "tie_embeddings": false}`. A null value keeps the option's default. Going through the
    command line's own parser gives the file the same type conversion, checks and error messages.

    >>> import json, os, tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
    ...     json.dump({"task": "sst2", "max_length": 64, "runs": ["a", "b"], "verbose": True, "seed": None}, handle)
    >>> options_file_flags([handle.name])
    ['--task', 'sst2', '--max_length', '64', '--runs', 'a', 'b', '--verbose', 'true']
    >>> os.remove(handle.name)
    """
    if len(argv) != 1 or not argv[0].endswith(".json"):
        return argv
    path = Path(argv[0])
    example = 'for example {"task": "sst2", "output_dir": "runs/x"}'
    try:
        options = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise OptionsError(f"cannot read the options file {path}: {error.strerror or error}.") from None
    except ValueError as error:
        raise OptionsError(f"the options file {path} is not valid JSON ({error}); {example}.") from None
    if not isinstance(options, dict):
        raise OptionsError(f"the options file {path} must hold one JSON object of options, {example}.")
    flags = []
    for key, value in options.items():
        if value is None:
            continue
        if isinstance(value, dict):
            raise OptionsError(
                f"{path}: the option {key!r} holds an object; give a string, number, true/false or list."
            )
        values = value if isinstance(value, list) else [value]
        flags += [f"--{key}", *(str(v).lower() if isinstance(v, bool) else str(v) for v in values)]
    return flags


def parse_args(
    dataclass_types: tuple[type, ...], argv: list[str] | None = None, raise_errors: bool = False
) -> tuple[Any, ...]:
    """Parses the command line (or a single JSON file of the same fields) into the given dataclasses.

    Errors raised in a dataclass's `__post_init__` come out as a usage error naming the bad value, or, with
    `raise_errors`, as an `OptionsError` (unknown options and malformed values too).
    """
    from transformers import HfArgumentParser

    class Parser(HfArgumentParser):
        def error(self, message: str):
            if raise_errors:
                raise OptionsError(f"{message} (see --help)")
            super().error(message)

    argv = sys.argv[1:] if argv is None else list(argv)
    parser = Parser(dataclass_types)
    try:
        argv = options_file_flags(argv)
    except OptionsError as error:
        parser.error(str(error))
    try:
        *parsed, unknown = parser.parse_args_into_dataclasses(args=argv, return_remaining_strings=True)
    except OptionsError:
        raise
    except ValueError as error:
        if raise_errors:
            raise OptionsError(str(error)) from None
        parser.error(str(error))
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    return tuple(parsed)
