"""A training that is one trial of an Optuna study (`compare run --tune N`): its validations reported to the study,
and its end when the study's pruner finds it hopeless.

`compare run` starts each trial's side command with `TRIAL_ENV` naming the study's storage, the study and the
trial (JSON). `TrialPruning.from_environment` is then the callback `core.training.fit` adds: after each validation
it reports the watched score (negated when lower is better, as the study maximizes) at step k for the k-th
validation, and when the pruner says so it ends training as a step budget does, so that the run is finished (its
best weights kept) and records `stop_reason: pruned`; `compare run` then tells the study the trial was pruned.

The callback also watches the process that started it: `compare run` killed (SIGKILL, a lost machine) leaves no
one to report to, and the training ends as after Ctrl-C, its unfinished run kept for the trial's retry to resume.
Outside a trial (no `TRIAL_ENV`) there is no callback and Optuna is never imported.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import time

import tensorflow as tf

from core.interrupts import Interrupted

logger = logging.getLogger(__name__)

TRIAL_ENV = "TEXTCLS_OPTUNA_TRIAL"
PARENT_CHECK_SECONDS = 1.0


class TrialPruning(tf.keras.callbacks.Callback):
    """Reports each validation's `monitor` to an Optuna trial and ends training when the study prunes it.

    Args:
        trial: the `optuna.Trial` to report to.
        monitor: the Keras logs key watched (`val_accuracy`, ...).
        mode: `max` when higher is better, `min` when lower.
        parent: the process id that started this one (None: not watched).
    """

    _supports_tf_logs = True
    reason = "pruned"

    def __init__(self, trial, monitor: str, mode: str = "max", parent: int | None = None) -> None:
        super().__init__()
        self.trial, self.monitor, self.sign, self.parent = trial, monitor, 1.0 if mode == "max" else -1.0, parent
        self.reached, self._checked = False, time.monotonic()

    @classmethod
    def from_environment(cls, monitor: str, mode: str) -> TrialPruning | None:
        """The callback of the trial `TRIAL_ENV` names, or None outside a trial."""
        given = os.environ.get(TRIAL_ENV)
        if not given:
            return None
        import optuna

        from core.studies import make_pruner, open_storage

        found = json.loads(given)
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        storage = open_storage(found["storage"])
        pruner = make_pruner(found["pruner"])
        study = optuna.load_study(study_name=found["study"], storage=storage, pruner=pruner)
        study_id = storage.get_study_id_from_name(found["study"])
        trial_id = storage.get_trial_id_from_study_id_trial_number(study_id, found["trial"])
        logger.info("Training trial %d of the study %s", found["trial"], found["study"])
        return cls(optuna.trial.Trial(study, trial_id), monitor, mode, found.get("parent"))

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        value = (logs or {}).get(self.monitor)
        if value is None:
            return
        validation = epoch + 1  # every epoch ends with a validation; a resumed run counts on from its backup
        self.trial.report(self.sign * float(value), validation)
        if self.trial.should_prune():
            logger.info("The study pruned this trial at validation %d (%s %.4f)", validation, self.monitor, value)
            self.reached = True
            self.model.stop_training = True

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        if self.parent is None or time.monotonic() - self._checked < PARENT_CHECK_SECONDS:
            return
        self._checked = time.monotonic()
        if os.getppid() != self.parent:  # the starting process is gone: this process was handed to another
            logger.warning("compare run, which started this trial, is gone; stopping as on Ctrl-C")
            raise Interrupted(signal.SIGTERM)
