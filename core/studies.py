"""Where an Optuna study lives: a journal file (one machine, or a shared file system; nothing to start) or a database
(`postgresql://`, `mysql://`, `sqlite:///`), opened the same way by `compare run` and by the trials it starts.

`compare run --tune-storage URL` takes either: a URL whose scheme names a database opens Optuna's `RDBStorage`, with
its heartbeat when `heartbeat_seconds` is given (a trial whose process stops beating for `grace_seconds` is failed
and handed to `stale_trial_callback`); anything else is the path of a journal file (`JournalStorage` over
`JournalFileBackend`, created when missing). Optuna is imported only when a storage is opened.

    >>> is_database("postgresql+psycopg2://me@db/optuna"), is_database("runs/tuning.journal")
    (True, False)
    >>> masked("postgresql://me:secret@db:5432/optuna")
    'postgresql://me:***@db:5432/optuna'
    >>> masked("/shared/sweeps/sst2.journal")
    '/shared/sweeps/sst2.journal'
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

DATABASES = ("postgresql", "mysql", "sqlite")


def is_database(url: str) -> bool:
    """Whether `url` names a database (its scheme, before `+driver`, is one of `DATABASES`)."""
    scheme, separator, _ = url.partition("://")
    return bool(separator) and scheme.split("+")[0].lower() in DATABASES


def masked(url: str) -> str:
    """`url` with its password hidden, as results.json records it and messages show it."""
    if not is_database(url):
        return url
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def open_storage(
    url: str,
    heartbeat_seconds: int | None = None,
    grace_seconds: int | None = None,
    stale_trial_callback: Callable[[Any, Any], None] | None = None,
) -> Any:
    """The Optuna storage `url` names (see the module docstring); a database is connected to at once, so that an
    unreachable one fails here (`sqlalchemy.exc.OperationalError` and the like)."""
    import optuna
    from optuna.storages.journal import JournalFileBackend, JournalStorage

    if is_database(url):
        with warnings.catch_warnings():  # the heartbeat is experimental in Optuna, and the way to see a worker die
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            return optuna.storages.RDBStorage(
                url,
                heartbeat_interval=heartbeat_seconds,
                grace_period=grace_seconds,
                heartbeat_stale_trial_callback=stale_trial_callback,
                engine_kwargs={"pool_pre_ping": True},
            )
    Path(url).parent.mkdir(parents=True, exist_ok=True)
    return JournalStorage(JournalFileBackend(str(url)))


def make_pruner(name: str):
    """The Optuna pruner `compare run --tune-pruner name` stops hopeless trials with (`none`: never)."""
    import optuna

    pruners = {
        "median": optuna.pruners.MedianPruner,
        "hyperband": lambda: optuna.pruners.HyperbandPruner(min_resource=1),
        "none": optuna.pruners.NopPruner,
    }
    if name not in pruners:
        raise ValueError(f"--tune-pruner takes {', '.join(pruners)}, not {name!r}")
    return pruners[name]()
