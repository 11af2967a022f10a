"""Named tasks: where each public dataset lives on the hub (or, for translation, in the local mirror) and what its
columns and labels are, and where the local mirrors are found (`find_data_dir`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

DATA_DIR_ENV = "TEXTCLS_DATA_DIR"
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
class TaskSpec:
    """A public text-classification dataset.

    Attributes:
        name: the short name users type (`--task sst2`).
        hub_id: the dataset's id on the Hugging Face hub.
        hub_config: the configuration passed to `datasets.load_dataset`, if any.
        text_columns: the hub dataset's text column(s).
        label_column: the hub dataset's label column.
        labels: class names in label-id order.
    """

    name: str
    hub_id: str
    hub_config: str | None
    text_columns: tuple[str, ...]
    label_column: str
    labels: tuple[str, ...]


TASKS: dict[str, TaskSpec] = {
    spec.name: spec
    for spec in (
        TaskSpec("sst2", "stanfordnlp/sst2", None, ("sentence",), "label", ("negative", "positive")),
        TaskSpec(
            "emotion",
            "dair-ai/emotion",
            "split",
            ("text",),
            "label",
            ("sadness", "joy", "love", "anger", "fear", "surprise"),
        ),
        TaskSpec("ag_news", "fancyzhx/ag_news", None, ("text",), "label", ("World", "Sports", "Business", "Sci/Tech")),
        TaskSpec(
            "trec", "CogComp/trec", None, ("text",), "coarse_label", ("ABBR", "ENTY", "DESC", "HUM", "LOC", "NUM")
        ),
        TaskSpec("imdb", "stanfordnlp/imdb", None, ("text",), "label", ("neg", "pos")),
        TaskSpec(
            "rotten_tomatoes", "cornell-movie-review-data/rotten_tomatoes", None, ("text",), "label", ("neg", "pos")
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
    """Returns the named classification task, or raises with the list of every known name, translation's too.

    >>> get_task("pt_es")
    Traceback (most recent call last):
    ValueError: Unknown task 'pt_es'. Known tasks: ag_news, ..., trec (classification); pt_en (translation). ...
    """
    try:
        return TASKS[name]
    except KeyError:
        known = f"{', '.join(sorted(TASKS))} (classification); {', '.join(sorted(PAIR_TASKS))} (translation)"
        raise ValueError(
            f"Unknown task {name!r}. Known tasks: {known}. For your own data pass --train-file "
            "(and --validation-file/--test-file) with --text-column and --label-column instead."
        ) from None
