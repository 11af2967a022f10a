"""Named tasks: where each public dataset lives on the hub (or, for translation, in the local mirror) and what its
columns and labels are."""

from __future__ import annotations

from dataclasses import dataclass


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
