"""`Views`: one layer's view of each kind of task, registered per kind in that layer (`core.kinds`).

A kind (`core.kinds.Kind`) holds the model's side of a task only. What another layer does differently by kind (how
`compare` scores and words it, how the app shows it, what the model card says, how distillation and attribution read
its outputs) is a class in that layer, one per kind, registered with that layer's `Views` under the kind's class
(docs/development.md, "Adding a kind, layer by layer"):

    >>> from core.card import carded
    >>> from core.kinds import Regression
    >>> carded(Regression()).noun, carded(Regression()).kind
    ('text regression model', Regression())
"""

from __future__ import annotations

from typing import Generic, TypeVar

from core.kinds.base import Kind


class KindView:
    """One layer's view of one kind: the layer's base view subclasses it, and each kind's view subclasses that.

    Attributes:
        kind: the kind viewed (`core.kinds.Kind`).
    """

    def __init__(self, kind: Kind) -> None:
        self.kind = kind


View = TypeVar("View", bound=KindView)
LAYERS: list[Views] = []  # every layer's views, in the order their modules were imported


class Views(Generic[View]):
    """A layer's views of the kinds, by kind class: `register(KindClass)` decorates a view class, `of(kind)` gives the
    registered view of a kind object.

    Args:
        layer: what the views are, for the error when a kind has none ("compare's scoring").
        module: where the layer's views are registered, for the same error.
    """

    def __init__(self, layer: str, module: str) -> None:
        self.layer, self.module = layer, module
        self._views: dict[type[Kind], View] = {}
        LAYERS.append(self)

    def register(self, kind_class: type[Kind]):
        """A class decorator adding a view of `kind_class` (the last registration for a kind wins)."""

        def add(view_class: type[View]) -> type[View]:
            self._views[kind_class] = view_class(kind_class())
            return view_class

        return add

    def of(self, kind: Kind) -> View:
        """The view registered for the kind's own class; LookupError saying where to register one otherwise."""
        try:
            return self._views[type(kind)]
        except KeyError:
            raise LookupError(
                f"{self.layer} has no view of the kind {kind.name} ({type(kind).__name__}): "
                f"register one with {self.module}.register({type(kind).__name__})."
            ) from None
