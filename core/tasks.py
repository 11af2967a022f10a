"""Named tasks: where each public dataset lives on the hub (or only in the local mirror) and what its columns,
labels and kind of problem are (`core.kinds`); and where the local mirrors are found (`find_data_dir`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from core import kinds
from core.kinds import MULTI_LABEL, REGRESSION, SINGLE_LABEL

DATA_DIR_ENV = "TEXTCLS_DATA_DIR"
SPLITS = ("train", "validation", "test")  # every task's splits, in this order
PAIR = "text_pair"  # the column of a pair task's second text in every split
ROOT = Path(__file__).resolve().parents[1]  # the project's checkout
# Where a mirror is looked for beside the project when $TEXTCLS_DATA_DIR is not set, relative to the checkout.
MIRROR_FOLDERS = (Path("..") / "shared" / "data", Path("data"))


def mirror_candidates(root: Path | None = None) -> list[Path]:
    """The folders beside the project (`root`, default the checkout) that may hold the local task mirrors, in the
    order they are tried."""
    return [Path(os.path.normpath((root or ROOT) / folder)) for folder in MIRROR_FOLDERS]


def find_data_dir(root: Path | None = None) -> str | None:
    """The folder of local task mirrors (`<dir>/<task>/train.csv ...`), found without any option.

    `$TEXTCLS_DATA_DIR` when set; else the first of `../shared/data` and `./data` beside the project (relative to
    the checkout `root`, default `ROOT`, not to the working directory) that exists; else None, and named tasks come
    from the hub.
    """
    if os.environ.get(DATA_DIR_ENV):
        return os.environ[DATA_DIR_ENV]
    return next((str(folder) for folder in mirror_candidates(root) if folder.is_dir()), None)


def where_mirrors_were_sought(data_dir: str | None, root: Path | None = None) -> str:
    """For a message: the folder searched for a task's mirror, or, with none, the places that were tried."""
    if data_dir:
        return f"under {data_dir}"
    tried = " or ".join(str(folder) for folder in mirror_candidates(root))
    return f"anywhere: --data-dir and ${DATA_DIR_ENV} are not set, and there is no {tried}"


@dataclass(frozen=True)
class Columns:
    """Where a table holds each part of an example.

    Attributes:
        text: the text column(s); several are joined with a space.
        label: the label column (unused when `label_columns` is given).
        text_pair: the column of the second text of a pair task, if the task has pairs.
        label_columns: one 0/1 column per label (multi-label), instead of `label`.
    """

    text: tuple[str, ...]
    label: str
    text_pair: str | None = None
    label_columns: tuple[str, ...] = ()


MIRROR_COLUMNS = Columns(("text",), "label")  # the columns of a single-label task's mirror
MIRROR_LABEL_SEPARATOR = ";"  # between the label names of a row of a multi-label task's mirror


@dataclass(frozen=True)
class TaskSpec:
    """A public text-classification (or text-regression) dataset.

    Attributes:
        name: the short name users type (`--task sst2`).
        hub_id: the dataset's id on the Hugging Face hub; None when only a local mirror has the task.
        hub_config: the configuration passed to `datasets.load_dataset`, if any.
        hub_columns: the hub dataset's columns.
        labels: class names in label-id order (empty for regression).
        problem: the name of its kind (`core.kinds`).
        mirror_columns: the columns of `<data dir>/<mirror folder>/*.csv`.
        no_hub: why there is no `hub_id`, for the message when the mirror is missing.
        mirror: the mirror's folder under the data dir when it is not `name` (two tasks on the same pairs).
        test_from: the official split our test split is, when it is not `test`: `validation` where the labelled test
            split is hidden (GLUE's STS-B), so that a test score compares with published dev-set figures;
            validation is then carved from train.
    """

    name: str
    hub_id: str | None
    hub_config: str | None
    hub_columns: Columns
    labels: tuple[str, ...]
    problem: str = SINGLE_LABEL
    mirror_columns: Columns = MIRROR_COLUMNS
    no_hub: str = ""
    mirror: str | None = None
    test_from: str = "test"

    @property
    def folder(self) -> str:
        """The mirror's folder under the data dir."""
        return self.mirror or self.name

    @property
    def official_splits(self) -> dict[str, str]:
        """Our split -> the official split it is, where the names differ (run.json `data.official_splits`).

        >>> get_task("stsb").official_splits, get_task("sst2").official_splits
        ({'test': 'validation'}, {})
        """
        return {} if self.test_from == "test" else {"test": self.test_from}


def _single(name: str, hub_id: str, config: str | None, text: str, label: str, labels: tuple[str, ...]) -> TaskSpec:
    return TaskSpec(name, hub_id, config, Columns((text,), label), labels)


SICK_NO_HUB = "the hub's copies of SICK number its entailment labels in their own order"
SICK_COLUMNS = Columns(("sentence1",), "label", text_pair="sentence2")  # the mirror's; `relatedness` beside them
EKMAN = ("anger", "disgust", "fear", "joy", "neutral", "sadness", "surprise")

TASKS: dict[str, TaskSpec] = {
    spec.name: spec
    for spec in (
        _single("sst2", "stanfordnlp/sst2", None, "sentence", "label", ("negative", "positive")),
        _single(
            "emotion",
            "dair-ai/emotion",
            "split",
            "text",
            "label",
            ("sadness", "joy", "love", "anger", "fear", "surprise"),
        ),
        _single("ag_news", "fancyzhx/ag_news", None, "text", "label", ("World", "Sports", "Business", "Sci/Tech")),
        _single("trec", "CogComp/trec", None, "text", "coarse_label", ("ABBR", "ENTY", "DESC", "HUM", "LOC", "NUM")),
        _single("imdb", "stanfordnlp/imdb", None, "text", "label", ("neg", "pos")),
        _single("rotten_tomatoes", "cornell-movie-review-data/rotten_tomatoes", None, "text", "label", ("neg", "pos")),
        TaskSpec(
            "goemotions_ekman",
            None,
            None,
            Columns(("text",), "labels"),
            EKMAN,
            MULTI_LABEL,
            mirror_columns=Columns(("text",), "labels"),
            no_hub="the hub's google-research-datasets/go_emotions has the 28 fine-grained emotions, not Ekman's 7",
        ),
        TaskSpec(
            "stsb",
            "nyu-mll/glue",
            "stsb",
            Columns(("sentence1",), "label", text_pair="sentence2"),
            (),
            REGRESSION,
            mirror_columns=Columns(("sentence1",), "score", text_pair="sentence2"),
            test_from="validation",  # GLUE withholds the test scores
        ),
        TaskSpec(
            "sick",
            None,
            None,
            SICK_COLUMNS,
            ("contradiction", "entailment", "neutral"),
            SINGLE_LABEL,
            mirror_columns=SICK_COLUMNS,
            no_hub=SICK_NO_HUB,
        ),
        TaskSpec(
            "sick_relatedness",
            None,
            None,
            Columns(("sentence1",), "relatedness", text_pair="sentence2"),
            (),
            REGRESSION,
            mirror_columns=Columns(("sentence1",), "relatedness", text_pair="sentence2"),
            mirror="sick",
            no_hub=SICK_NO_HUB,
        ),
    )
}


@dataclass(frozen=True)
class PairTaskSpec:
    """A named parallel corpus: `<data dir>/<name>/{train,validation,test}.tsv` with these columns."""

    name: str
    source_column: str
    target_column: str
    domain_column: str | None


PAIR_TASKS: dict[str, PairTaskSpec] = {"pt_en": PairTaskSpec("pt_en", "pt", "en", "source")}


def get_task(name: str) -> TaskSpec:
    """Returns the named classification or regression task, or raises with the list of every known name, by kind.

    >>> get_task("pt_es")
    Traceback (most recent call last):
    ValueError: Unknown task 'pt_es'. Known tasks: ag_news, ..., trec (classification); goemotions_ekman (multi-label); sick_relatedness, stsb (regression); pt_en (translation). ...
    """
    try:
        return TASKS[name]
    except KeyError:
        groups = [
            f"{', '.join(sorted(t.name for t in TASKS.values() if t.problem == kind.name))} ({kind.short})"
            for kind in kinds.KINDS.values()
            if any(t.problem == kind.name for t in TASKS.values())
        ]
        known = "; ".join([*groups, f"{', '.join(sorted(PAIR_TASKS))} (translation)"])
        raise ValueError(
            f"Unknown task {name!r}. Known tasks: {known}. For your own data pass --train-file "
            "(and --validation-file/--test-file) with --text-column and --label-column instead."
        ) from None
