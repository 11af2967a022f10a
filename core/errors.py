"""The two kinds of expected failure, and so the exit statuses of every command (`core.cli`).

- `UserError`: input a user can fix (bad data, bad options, a refused run directory, a bad checkpoint), found
  before the work starts: one `error: <message>` line and exit status 2.
- `WorkFailed`: a run or comparison that failed while working, after its input was accepted (a side's training
  command failed, say): one `error: <message>` line and exit status 1.

Any other exception is a bug and keeps its traceback.
"""

from __future__ import annotations


class UserError(ValueError):
    """An expected failure whose message says what was wrong and what to do instead."""


class WorkFailed(RuntimeError):
    """A run or comparison that failed while working; the message says what failed and where its log is."""
