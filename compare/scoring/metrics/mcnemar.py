"""McNemar's exact test: do two classifiers scored on the same examples differ in accuracy?

Only the discordant examples count: `b` where the first model is right and the second wrong, `c` the
other way round. Under the null hypothesis each discordant example is a fair coin, so the two-sided exact
p-value is P(X <= min(b, c)) doubled, X ~ Binomial(b + c, 1/2), capped at 1.

Examples:
    >>> from compare.scoring.metrics import load_metric
    >>> mcnemar = load_metric("mcnemar")
    >>> references = [1] * 10
    >>> first = [1] * 9 + [0]     # right on the first nine
    >>> second = [0] * 9 + [1]    # right on the last one only
    >>> result = mcnemar.compute(predictions1=first, predictions2=second, references=references)
    >>> result["b"], result["c"], result["statistic"]
    (9, 1, 1)
    >>> round(result["p_value"], 6)  # 2 * (1 + 10) / 2**10
    0.021484
    >>> mcnemar.compute(predictions1=[0, 1], predictions2=[0, 1], references=[0, 0])["p_value"]
    1.0
"""

import evaluate
import numpy as np
from scipy.stats import binom

from compare.scoring.metrics import label_id_info

_DESCRIPTION = "McNemar's exact (binomial) test on the examples where exactly one of two classifiers is right."
_KWARGS_DESCRIPTION = """
Args:
    predictions1 (list of int): the first model's predicted label ids.
    predictions2 (list of int): the second model's predicted label ids.
    references (list of int): gold label ids.
Returns:
    b (int): examples the first model gets right and the second wrong.
    c (int): examples the second model gets right and the first wrong.
    statistic (int): min(b, c).
    p_value (float): two-sided exact p-value.
"""


class McNemar(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return label_id_info(_DESCRIPTION, _KWARGS_DESCRIPTION, ("predictions1", "predictions2", "references"))

    def _compute(self, predictions1: list[int], predictions2: list[int], references: list[int]) -> dict:
        references = np.asarray(references)
        right1, right2 = np.asarray(predictions1) == references, np.asarray(predictions2) == references
        b, c = int((right1 & ~right2).sum()), int((~right1 & right2).sum())
        p_value = 1.0 if b + c == 0 else min(1.0, 2.0 * float(binom.cdf(min(b, c), b + c, 0.5)))
        return {"b": b, "c": c, "statistic": min(b, c), "p_value": p_value}
