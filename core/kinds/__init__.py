"""The kinds of task, each an object that carries the model's side of what differs by kind (docs/formats.md, "Kinds of
task"); each layer above keeps its own view of a kind (`core.kinds.views`).

A kind is one of transformers' `problem_type` names, the key users type (`--problem`) and run.json stores
(`data.problem_type`); `get(name)` gives its object, and code asks the object instead of comparing names:

| kind                          | class         | outputs            | headline / second     | decision             |
|-------------------------------|---------------|--------------------|-----------------------|----------------------|
| single_label_classification   | `SingleLabel` | softmax (n, C)     | accuracy / macro_f1   | argmax               |
| multi_label_classification    | `MultiLabel`  | sigmoid (n, L)     | macro_f1 / micro_f1   | per-label thresholds |
| regression                    | `Regression`  | the value (n,)     | spearman / pearson    | the value itself     |

A new kind is one subclass of `Kind` passed to `register`, and one view of it in each layer (docs/development.md,
"Adding a kind, layer by layer"; a test registers a fourth).

Examples:
    >>> get("regression").monitor, get("regression").mode
    ('val_spearman', 'max')
    >>> [kind.short for kind in KINDS.values()]
    ['classification', 'multi-label', 'regression']
"""

from core.kinds.base import DEFAULT, KINDS, Kind, get, names, register

# isort: split
from core.kinds.single_label import SingleLabel  # registered first: the default, and first in every list

# isort: split
from core.kinds.multi_label import MultiLabel
from core.kinds.regression import Regression

SINGLE_LABEL, MULTI_LABEL, REGRESSION = SingleLabel.name, MultiLabel.name, Regression.name

__all__ = [
    "DEFAULT",
    "KINDS",
    "MULTI_LABEL",
    "REGRESSION",
    "SINGLE_LABEL",
    "Kind",
    "MultiLabel",
    "Regression",
    "SingleLabel",
    "get",
    "names",
    "register",
]
