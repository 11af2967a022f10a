"""How reports write scores and their differences in words, and how they name the reference rows.

What a comparison tracks for each kind of task (its two scores, the headline first: `core.kinds`, `Kind.scores`)
is the kind's; this module only words them. `of_results` turns the kind a results.json records into its object.

Examples:
    >>> of_results({"problem_type": "regression"}).scores
    ('spearman', 'pearson')
    >>> amount("accuracy", -0.0421), amount("macro_f1", 0.05), amount("spearman", 0.1234)
    ('4.2 points', '5.0 points of macro-F1', '0.123 in Spearman')
"""

from __future__ import annotations

from core import kinds
from core.kinds import Kind

NAMES = {
    "accuracy": "accuracy",
    "macro_f1": "macro-F1",
    "micro_f1": "micro-F1",
    "weighted_f1": "weighted F1",
    "subset_accuracy": "subset accuracy",
    "hamming_loss": "Hamming loss",
    "spearman": "Spearman",
    "pearson": "Pearson",
    "mse": "MSE",
    "mae": "MAE",
}
NOT_FRACTIONS = {"spearman", "pearson", "mcc", "mse", "mae"}  # correlations and errors: shown as they are

# How the report names the reference rows of every kind (`ComparedKind.reference_rows`); the TF-IDF
# ones are what a Transformer must beat (`compare.diagnosis`, `below_baseline`).
REFERENCE_NAMES = {
    "majority": "majority class",
    "tfidf_logreg": "TF-IDF + logistic regression",
    "no_labels": "no label at all",
    "tfidf_one_vs_rest": "TF-IDF + one-vs-rest logistic regression",
    "train_mean": "train mean",
    "tfidf_ridge": "TF-IDF + ridge regression",
    "tfidf_cosine": "TF-IDF cosine of the two texts",
}
TFIDF_REFERENCES = ("tfidf_logreg", "tfidf_one_vs_rest", "tfidf_ridge", "tfidf_cosine")


def of_results(results: dict) -> Kind:
    """The kind of task a results.json (or curve.json) scored; one written before the other kinds is single label."""
    return kinds.get(results.get("problem_type"))


def name(metric: str) -> str:
    """How a report calls a score: `macro-F1`, `Spearman`."""
    return NAMES.get(metric, metric)


def is_fraction(metric: str) -> bool:
    """Whether a score is a fraction in 0..1, shown in percent (its differences in points)."""
    return metric not in NOT_FRACTIONS


def magnitude(metric: str, difference: float) -> str:
    """The size of a difference in `metric`, unsigned: `4.2` (points of a fraction) or `0.123`."""
    return f"{abs(difference) * 100:.1f}" if is_fraction(metric) else f"{abs(difference):.3f}"


def signed_number(metric: str, difference: float) -> str:
    """A signed difference in `metric`: `+4.2` (points) or `+0.123`."""
    return f"{difference * 100:+.1f}" if is_fraction(metric) else f"{difference:+.3f}"


def size(metric: str, difference: float, signed: bool = False) -> str:
    """A difference with its unit: `4.2 points` (`+4.2 points` signed) of a fraction, else `0.123` (`+0.123`)."""
    number = signed_number(metric, difference) if signed else magnitude(metric, difference)
    return f"{number} points" if is_fraction(metric) else number


def amount(metric: str, difference: float) -> str:
    """The size of a difference in `metric`, for a sentence: `4.2 points` (accuracy), `4.2 points of macro-F1`,
    `0.123 in Spearman`."""
    if not is_fraction(metric):
        return f"{size(metric, difference)} in {name(metric)}"
    return size(metric, difference) + ("" if metric == "accuracy" else f" of {name(metric)}")


def signed_interval(metric: str, bounds: list[float]) -> str:
    """`[+1.0, +5.0] points` or `[+0.012, +0.050]`."""
    numbers = f"[{signed_number(metric, bounds[0])}, {signed_number(metric, bounds[1])}]"
    return numbers + (" points" if is_fraction(metric) else "")


def plural(number: int, noun: str) -> str:
    """`1 epoch`, `3 epochs`: a count with its noun, plural unless one.

    >>> plural(1, "epoch"), plural(3, "epoch")
    ('1 epoch', '3 epochs')
    """
    return f"{number} {noun}{'' if number == 1 else 's'}"
