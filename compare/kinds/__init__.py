"""How `compare` scores, tables and words each kind of task: one `ComparedKind` per kind (`core.kinds`), registered
with `register(KindClass)` and found with `reported(kind)`.

Examples:
    >>> from core import kinds
    >>> reported(kinds.get("regression")).figures
    ('predicted_vs_gold',)
"""

from compare.kinds.base import VIEWS, ComparedKind, register, reported

# isort: split
from compare.kinds.multi_label import ComparedMultiLabel
from compare.kinds.regression import ComparedRegression
from compare.kinds.single_label import ComparedSingleLabel

__all__ = [
    "VIEWS",
    "ComparedKind",
    "ComparedMultiLabel",
    "ComparedRegression",
    "ComparedSingleLabel",
    "register",
    "reported",
]
