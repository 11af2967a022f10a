"""The one base class of the errors a user can fix: bad data, bad options, a refused run directory, a bad checkpoint.

Commands print such an error as one `error: <message>` line and exit with status 2 (see `core.cli`); any
other exception is a bug and keeps its traceback.
"""

from __future__ import annotations


class UserError(ValueError):
    """An expected failure whose message says what was wrong and what to do instead."""
