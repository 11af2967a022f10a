"""How the app shows each kind of task: one `ShownKind` per kind (`core.kinds`), registered with `register(KindClass)`
and found with `shown(kind)`.

Examples:
    >>> from core import kinds
    >>> shown(kinds.get("regression")).answer_space([], (0.0, 5.0))
    'a value from 0 to 5 in train'
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from core.kinds import MultiLabel, Regression, SingleLabel
from core.kinds.base import quoted
from core.kinds.views import KindView, Views


def number(value: float) -> str:
    """A value with four significant digits (3.421, 12.35, 1235), as the app shows it; its API gives it in full.

    >>> number(3.42137), number(1234.5), number(float("nan"))
    ('3.421', '1234', 'nan')
    """
    return f"{value:.4g}" if math.isfinite(value) else str(value)


class ShownKind(KindView):
    """The app's view of one kind. Subclasses set the class attributes and override what differs.

    Attributes:
        label_panel: whether the app shows an answer as a `gr.Label` (else as `panel` Markdown).
        gold_title: how a table heads the gold answer.
    """

    label_panel: ClassVar[bool] = False
    gold_title: ClassVar[str] = "Gold label"

    def app_answers(
        self, outputs: np.ndarray, labels: list[str], thresholds: list[float] | None = None
    ) -> list[dict[str, Any]]:
        """The app's answer to each row of a model's outputs, as its `/classify` endpoint returns it: `{"value":
        number}` for a kind that gives values; else the decision in words (`label`, `decide` then `answer`), each
        label's probability (`probs`) and, where the run chose them, each label's threshold (`thresholds`), as
        predictions.jsonl names `value`, `label` and `probs`."""
        if self.kind.gives_values:
            return [{"value": float(value)} for value in outputs]
        decided = self.kind.decide(outputs, thresholds)
        chosen = {} if thresholds is None else {"thresholds": dict(zip(labels, map(float, thresholds)))}
        return [
            {"label": self.kind.answer(labels, row_decided), "probs": dict(zip(labels, map(float, row))), **chosen}
            for row, row_decided in zip(outputs, decided)
        ]

    def decision(self, answer: dict[str, Any]) -> Any:
        """What an app answer decides, as predictions.jsonl holds it: a class, the chosen labels, the value."""
        return answer["value"] if self.kind.gives_values else answer["label"]

    def panel(self, answer: dict[str, Any], value_range: tuple[float, float] | None = None) -> Any:
        """What a model's panel on the page shows of its answer: the answer itself for a `gr.Label` (`label_panel`),
        else Markdown; `value_range` is the train split's smallest and largest value, where recorded."""
        raise NotImplementedError

    def invitation(self, them: str) -> str:
        """What the page's header invites a user to see the models do with the text(s) typed (`them`)."""
        raise NotImplementedError

    def answer_space(self, labels: list[str], value_range: tuple[float, float] | None = None) -> str:
        """What the models answer with, for the page's header: "classes: `negative`, `positive`"."""
        raise NotImplementedError

    def confidence(self, answer: dict[str, Any]) -> float | None:
        """How sure an app answer (`app_answers`) is, for the app to abstain below a confidence the user sets; None
        where there is no probability to judge by (a value)."""
        return None


VIEWS: Views[ShownKind] = Views("the app", "demo.kinds")
register = VIEWS.register
shown = VIEWS.of


@register(SingleLabel)
class ShownSingleLabel(ShownKind):
    label_panel = True

    def app_answers(
        self, outputs: np.ndarray, labels: list[str], thresholds: list[float] | None = None
    ) -> list[dict[str, Any]]:
        """`{label: probability}`: the classes' probabilities (summing to 1), in label order."""
        return [{label: float(p) for label, p in zip(labels, row)} for row in outputs]

    def decision(self, answer: dict[str, Any]) -> Any:
        """The most probable class."""
        return max(answer, key=answer.get)

    def panel(self, answer: dict[str, Any], value_range: tuple[float, float] | None = None) -> Any:
        return answer

    def invitation(self, them: str) -> str:
        return f"see how each model classifies {them}"

    def answer_space(self, labels: list[str], value_range: tuple[float, float] | None = None) -> str:
        return f"classes: {quoted(labels)}"

    def confidence(self, answer: dict[str, Any]) -> float | None:
        """The chosen class's probability."""
        return max(answer.values())


@register(MultiLabel)
class ShownMultiLabel(ShownKind):
    gold_title = "Gold labels"

    def panel(self, answer: dict[str, Any], value_range: tuple[float, float] | None = None) -> Any:
        """The chosen labels over a table of each label's probability and threshold, the chosen ones ticked."""
        chosen = answer["label"]
        head = "**Chosen:** " + (", ".join(f"`{label}`" for label in chosen) or "none: no label reaches its threshold")
        rows = [
            f"| {f'✓ **{label}**' if label in chosen else label} | {p:.3f} | {answer['thresholds'][label]:.3f} |"
            for label, p in answer["probs"].items()
        ]
        return "\n".join([head, "", "| label | probability | threshold |", "|---|---:|---:|", *rows])

    def invitation(self, them: str) -> str:
        return (
            f"see which labels each model gives {them}: every label whose probability reaches the threshold its run "
            "chose on validation"
        )

    def answer_space(self, labels: list[str], value_range: tuple[float, float] | None = None) -> str:
        return f"labels: {quoted(labels)}"

    def confidence(self, answer: dict[str, Any]) -> float | None:
        """The least sure of its label decisions: the smallest of max(p, 1 - p) over the labels."""
        return min((max(p, 1 - p) for p in answer["probs"].values()), default=None)


@register(Regression)
class ShownRegression(ShownKind):
    gold_title = "Gold value"

    def panel(self, answer: dict[str, Any], value_range: tuple[float, float] | None = None) -> Any:
        """The value, and the train split's range when recorded."""
        scale = ""
        if value_range is not None:
            low, high = map(number, value_range)
            scale = f"\n\nThe train split's values run from {low} to {high}."
        return f"### {number(answer['value'])}{scale}"

    def invitation(self, them: str) -> str:
        return f"see the value each model gives {them}"

    def answer_space(self, labels: list[str], value_range: tuple[float, float] | None = None) -> str:
        scale = "" if value_range is None else " from {} to {} in train".format(*map(number, value_range))
        return f"a value{scale}"
