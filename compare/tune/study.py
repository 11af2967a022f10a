"""A sweep's trainings as the trials of one Optuna study, shared by every process that runs the same command.

`Sweep` holds N trials in all. Each process claims trials (`claim`) and trains them until the study has N finished
ones, waiting while the last ones train elsewhere (`run`); no trial is trained twice:

- A claim is `study.ask()`: a trial waiting to be retried first, else a new one. A new trial is kept only while the
  trials numbered before it hold fewer than N *slots*; two processes asking at once both get a trial, and the one
  numbered later finds the slots taken, marks its trial `surplus` and fails it before drawing anything.
- A slot is a trial and its retries: a retry (Optuna's `RetryHeartbeatStaleTrialCallback`) has a new number and
  keeps the first trial's (`slot_of`), and so the first trial's run directory, where its unfinished run resumes.
- A claimed trial beats while it trains. On a database Optuna's own heartbeat does it (`RDBStorage` with
  `heartbeat_interval`; `fail_stale_trials` fails a silent trial and the callback enqueues its retry); the journal
  file has no heartbeat in Optuna, so here the beat is the trial's `heartbeat` user attribute and a trial silent for
  `GRACE_SECONDS` is failed and handed to the same callback (`reap`).
- A training that fails in this process is failed and enqueued for a retry too, so a rerun takes it up.

The study records the data it sweeps (`data_fingerprint`, with a description of the data): a study of other data
under the same name is refused rather than mixed in (`check_study`).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import optuna
from optuna.trial import FrozenTrial, TrialState

from core.errors import UserError
from core.studies import is_database, masked, open_storage

logger = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 10  # how often a training trial says it is alive
GRACE_SECONDS = 60  # a running trial silent this long is failed and retried
POLL_SECONDS = 5.0  # how often a process with nothing to claim looks again
OPEN_ATTEMPTS = 4  # tries at opening a database, which processes starting together may race to set up
MAX_RETRY = 3  # retries of one slot; a slot failed more often counts as finished (failed)
SURPLUS, HEARTBEAT = "surplus", "heartbeat"
FINISHED = (TrialState.COMPLETE, TrialState.PRUNED)


@dataclass(frozen=True)
class Outcome:
    """What became of a trained trial: `complete` with its value, or `pruned`, and what the study keeps of it."""

    state: TrialState
    value: float
    attrs: dict


def retry_callback() -> optuna.storages.RetryHeartbeatStaleTrialCallback:
    """Optuna's callback that enqueues a failed trial again with its parameters and validations, `MAX_RETRY` times."""
    with warnings.catch_warnings():  # experimental in Optuna since 2.8, and the one way to retry a trial
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        return optuna.storages.RetryHeartbeatStaleTrialCallback(MAX_RETRY, inherit_intermediate_values=True)


def slot_of(trial: FrozenTrial) -> int:
    """The number of the first trial of `trial`'s retries (its own when it is no retry)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        first = optuna.storages.RetryHeartbeatStaleTrialCallback.retried_trial_number(trial)
    return trial.number if first is None else first


def open_study(
    url: str, name: str, sampler: optuna.samplers.BaseSampler, pruner: optuna.pruners.BasePruner | None = None
) -> tuple[optuna.Study, optuna.storages.BaseStorage]:
    """The study `name` in the storage `url`, created when missing (maximizing), and its storage. Refuses an
    unreachable storage with a `UserError` naming `--tune-storage`."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)  # one line per trial would drown the progress lines
    attempt = 0
    while True:
        try:
            storage = open_storage(url, HEARTBEAT_SECONDS, GRACE_SECONDS, retry_callback())
            study = optuna.create_study(
                study_name=name,
                storage=storage,
                sampler=sampler,
                pruner=pruner,
                direction="maximize",
                load_if_exists=True,
            )
            return study, storage
        except Exception as error:  # sqlalchemy's and the drivers' errors have no common base but Exception
            if not is_database(url) and not isinstance(error, OSError):
                raise
            attempt += 1
            if attempt < OPEN_ATTEMPTS and not unreachable(error):
                # Processes starting together on a new database race to create Optuna's tables: the loser retries.
                time.sleep(attempt)
                continue
            reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise UserError(
                f"--tune-storage {masked(url)} cannot be opened ({reason}); start the server, or give a storage this "
                "machine can reach (a journal file path, or postgresql://user:password@host/database)."
            ) from None


def unreachable(error: Exception) -> bool:
    """Whether opening a database failed for want of a server (or of its driver), which trying again will not mend."""
    text = str(error).lower()
    return isinstance(error, (ImportError, OSError)) or any(
        words in text for words in ("connection refused", "could not connect", "name or service", "timeout", "import")
    )


def check_study(study: optuna.Study, fingerprint: str, described: str) -> None:
    """Records the data `fingerprint` in a new study; refuses a study that holds trials of other data."""
    found = study.user_attrs.get("data_fingerprint")
    if found is None:
        study.set_user_attr("data_fingerprint", fingerprint)
        study.set_user_attr("data", described)
    elif found != fingerprint:
        raise UserError(
            f"the study {study.study_name!r} in --tune-storage holds trials of other data "
            f"({study.user_attrs.get('data', 'fingerprint ' + found[:12])}; this command's: {described}); give "
            "another --tune-study name or another --tune-storage."
        )


class Sweep:
    """N trials of one study, shared by every process training them (see the module docstring).

    Args:
        study: the study and its storage (`open_study`).
        n: the trials the sweep needs.
    """

    def __init__(self, study: tuple[optuna.Study, optuna.storages.BaseStorage], n: int) -> None:
        (self.study, self.storage), self.n = study, n
        self.study_id = self.storage.get_study_id_from_name(self.study.study_name)

    def trials(self) -> list[FrozenTrial]:
        """Every trial but the surplus ones, by number."""
        return [t for t in self.study.get_trials(deepcopy=False) if not t.user_attrs.get(SURPLUS)]

    def slots(self) -> dict[int, list[FrozenTrial]]:
        """The first N slots, each with its trials by number."""
        found: dict[int, list[FrozenTrial]] = {}
        for trial in self.trials():
            found.setdefault(slot_of(trial), []).append(trial)
        return {slot: found[slot] for slot in sorted(found)[: self.n]}

    def index(self, trial: FrozenTrial) -> int:
        """The place of `trial`'s slot among the slots, from 0: its run directory's number, the same for its retries
        (a surplus trial never comes before a slot, so the place of a claimed slot never changes)."""
        return sorted(self.slots()).index(slot_of(trial))

    def done(self) -> bool:
        """Whether every one of the N slots has finished: completed, pruned, or failed more than `MAX_RETRY` times."""
        slots = self.slots()
        return len(slots) == self.n and all(_slot_finished(trials) for trials in slots.values())

    def claim(self) -> optuna.Trial | None:
        """A trial for this process to train: a retry waiting, or a new slot; None when there is none to claim now."""
        self.reap()
        slots = self.slots()
        waiting = any(t.state == TrialState.WAITING for trials in slots.values() for t in trials)
        if not waiting and len(slots) >= self.n:
            return None
        trial = self.study.ask()
        frozen = self.frozen(trial.number)
        if slot_of(frozen) != frozen.number:
            return trial  # a retry: its slot was counted when it was first claimed
        earlier = {slot_of(t) for t in self.trials() if t.number < trial.number}
        if len(earlier) >= self.n:  # another process claimed the last slot first
            self.study.set_user_attr("surplus_trials", self.study.user_attrs.get("surplus_trials", 0) + 1)
            self.storage.set_trial_user_attr(frozen._trial_id, SURPLUS, True)
            self.study.tell(trial, state=TrialState.FAIL)
            return None
        return trial

    def frozen(self, number: int) -> FrozenTrial:
        trial_id = self.storage.get_trial_id_from_study_id_trial_number(self.study_id, number)
        return self.storage.get_trial(trial_id)

    def run(self, train: Callable[[optuna.Trial], Outcome], on_wait: Callable[[], None] | None = None) -> bool:
        """Claims and trains trials (`train`) until the study has N finished ones, then returns whether this process
        is the one to go on: it finished the study's last trial, or found the study finished when it came."""
        if self.done():
            return True
        last, waiting = False, False
        while True:
            trial = self.claim()
            if trial is None:
                if self.done():
                    return last
                if on_wait and not waiting:  # once per wait: the trials training elsewhere may take hours
                    on_wait()
                waiting = True
                time.sleep(POLL_SECONDS)
                continue
            self.train(trial, train)
            last, waiting = self.done(), False

    def train(self, trial: optuna.Trial, train: Callable[[optuna.Trial], Outcome]) -> None:
        """Trains one claimed trial while it beats, and tells the study how it ended; a failure or an interruption
        fails it and enqueues its retry before going on up."""
        with self.beating(trial):
            try:
                outcome = train(trial)
            except BaseException:
                self.fail(trial.number)
                raise
        for key, value in outcome.attrs.items():
            trial.set_user_attr(key, value)
        try:
            if outcome.state == TrialState.PRUNED:
                self.study.tell(trial, state=TrialState.PRUNED)
            else:
                self.study.tell(trial, outcome.value)
        except optuna.exceptions.UpdateFinishedTrialError:  # judged stale while it trained: its retry reuses the run
            logger.warning("Trial %d was given up as stale while it trained; its retry reuses its run", trial.number)

    def fail(self, number: int) -> None:
        """Fails the running trial `number` and enqueues its retry (unless another process failed it first)."""
        frozen = self.frozen(number)
        try:
            self.storage.set_trial_state_values(frozen._trial_id, TrialState.FAIL)
        except optuna.exceptions.UpdateFinishedTrialError:
            return
        callback = self.storage.get_heartbeat_stale_trial_callback() if is_heartbeat(self.storage) else None
        (callback or retry_callback())(self.study, self.frozen(number))

    @contextlib.contextmanager
    def beating(self, trial: optuna.Trial) -> Iterator[None]:
        """Keeps `trial` alive in the storage while the block runs (a beat every `HEARTBEAT_SECONDS`)."""
        trial_id, stop = self.frozen(trial.number)._trial_id, threading.Event()

        def beat() -> None:
            while True:
                try:
                    if is_heartbeat(self.storage):
                        self.storage.record_heartbeat(trial_id)
                    else:
                        self.storage.set_trial_user_attr(trial_id, HEARTBEAT, time.time())
                except optuna.exceptions.UpdateFinishedTrialError:
                    return
                if stop.wait(HEARTBEAT_SECONDS):
                    return

        thread = threading.Thread(target=beat, name=f"heartbeat-{trial.number}", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()

    def reap(self) -> None:
        """Fails the trials whose process stopped beating and enqueues their retries."""
        if is_heartbeat(self.storage):
            optuna.storages.fail_stale_trials(self.study)
            return
        now = time.time()
        for trial in self.study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
            started = trial.datetime_start.timestamp() if trial.datetime_start else now
            last = max(trial.user_attrs.get(HEARTBEAT, 0.0), started)
            if now - last > GRACE_SECONDS:
                logger.warning("Trial %d has been silent for %.0f s: retrying it", trial.number, now - last)
                self.fail(trial.number)


def is_heartbeat(storage: optuna.storages.BaseStorage) -> bool:
    """Whether `storage` keeps Optuna's own heartbeat (a database opened with `heartbeat_interval`)."""
    return isinstance(storage, optuna.storages.RDBStorage) and storage.get_heartbeat_interval() is not None


def _slot_finished(trials: list[FrozenTrial]) -> bool:
    if any(t.state in FINISHED for t in trials):
        return True
    return all(t.state == TrialState.FAIL for t in trials) and len(trials) > MAX_RETRY


IMPORTANCE_TRIALS = 5  # fewer completed trials than this tell too little to apportion their variance


def importances(study: optuna.Study) -> dict[str, float] | None:
    """The parameters' importances over the study's completed trials (Optuna's fANOVA evaluator, seeded), or None
    with fewer than `IMPORTANCE_TRIALS` completed trials or when the trials cannot apportion their variance (one
    parameter value throughout, say)."""
    completed = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    if len(completed) < IMPORTANCE_TRIALS:
        return None
    evaluator = optuna.importance.FanovaImportanceEvaluator(seed=0)
    try:
        found = optuna.importance.get_param_importances(study, evaluator=evaluator)
    except (ValueError, RuntimeError) as error:
        logger.info("No parameter importances for %s: %s", study.study_name, error)
        return None
    return {name: round(float(value), 4) for name, value in found.items()}


def run_grid(
    url: str,
    name: str,
    work: dict[str, Callable[[], None]],
    fingerprint: str,
    described: str,
    on_wait: Callable[[], None] | None = None,
) -> bool:
    """Runs `work` (a training per key) as the trials of the grid study `name` in the storage `url`: Optuna's
    `GridSampler` over the keys, trial i taking key i, shared by every process running the same grid.

    Returns:
        Whether this process finished the grid's last training or found the grid finished (`Sweep.run`).
    """
    from compare.tune.sampling import Grid

    keys = sorted(work)
    study, storage = open_study(url, name, Grid({"run": keys}, seed=0))
    check_study(study, fingerprint, described)

    def train(trial: optuna.Trial) -> Outcome:
        work[trial.suggest_categorical("run", keys)]()
        return Outcome(TrialState.COMPLETE, 0.0, {})

    return Sweep((study, storage), len(keys)).run(train, on_wait)
