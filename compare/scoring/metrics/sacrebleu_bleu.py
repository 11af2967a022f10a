"""Corpus BLEU as sacreBLEU computes it: 13a tokenisation, cased, exponential smoothing, one reference.

BLEU is the geometric mean of the clipped 1- to 4-gram precisions of the whole corpus times a brevity
penalty, on sacrebleu's 0-100 scale. The signature names every setting, so a score can be reproduced.

Examples:
    >>> from compare.scoring.metrics import load_metric
    >>> bleu = load_metric("sacrebleu_bleu")
    >>> round(bleu.compute(predictions=["The cat sat on the mat."], references=["The cat sat on the mat."])["bleu"], 6)
    100.0
    >>> result = bleu.compute(predictions=["the cat sat on the mat ."], references=["The cat sat on the mat."])
    >>> round(result["bleu"], 2)  # cased: "the" does not match "The"
    80.91
    >>> result["signature"].startswith("nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:")
    True
"""

import datasets
import evaluate
import sacrebleu

_DESCRIPTION = "Corpus BLEU of sacrebleu (13a tokenisation, cased) against one reference per sentence, 0-100."
_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): the system's translations.
    references (list of str): one reference translation per prediction.
Returns:
    bleu (float): corpus BLEU, 0-100.
    signature (str): sacrebleu's signature of the settings.
"""


def make_bleu() -> sacrebleu.BLEU:
    """The BLEU the suite scores with (also used to resample its sentence statistics)."""
    return sacrebleu.BLEU(tokenize="13a", lowercase=False)


class SacrebleuBleu(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation="Post (2018), A Call for Clarity in Reporting BLEU Scores.",
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"predictions": datasets.Value("string"), "references": datasets.Value("string")}
            ),
        )

    def _compute(self, predictions: list[str], references: list[str]) -> dict:
        bleu = make_bleu()
        return {"bleu": bleu.corpus_score(predictions, [references]).score, "signature": str(bleu.get_signature())}
