"""What qualifies a comparison: findings per model, the verdict's clause, accuracy against training time."""

from compare.diagnosis.findings import CODES, diagnose, diagnose_report
from compare.diagnosis.training_curves_figure import training_curves_png, write_training_curves
from compare.diagnosis.training_time import ahead_at_equal_time, equal_time_sentence, training_curves
from compare.diagnosis.verdict import verdict_clause

__all__ = [
    "CODES",
    "ahead_at_equal_time",
    "diagnose",
    "diagnose_report",
    "equal_time_sentence",
    "training_curves",
    "training_curves_png",
    "verdict_clause",
    "write_training_curves",
]
