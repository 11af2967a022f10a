"""Corpus chrF++ as sacreBLEU computes it: character 6-grams and word 2-grams, beta 2, one reference.

chrF++ is chrF (the F-score of character n-gram precision and recall, recall weighted beta = 2 times as
much) with word unigrams and bigrams added (`word_order=2`), averaged over n-gram orders from the corpus
totals, on sacrebleu's 0-100 scale.

Examples:
    >>> from compare.scoring.metrics import load_metric
    >>> chrf = load_metric("sacrebleu_chrf")
    >>> chrf.compute(predictions=["The cat sat on the mat."], references=["The cat sat on the mat."])["chrf"]
    100.0
    >>> result = chrf.compute(predictions=["A cat sat on a mat."], references=["The cat sat on the mat."])
    >>> 0 < result["chrf"] < 100
    True
    >>> result["signature"].startswith("nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:")
    True
"""

import datasets
import evaluate
import sacrebleu

_DESCRIPTION = "Corpus chrF++ of sacrebleu (chrF with word order 2) against one reference per sentence, 0-100."
_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): the system's translations.
    references (list of str): one reference translation per prediction.
Returns:
    chrf (float): corpus chrF++, 0-100.
    signature (str): sacrebleu's signature of the settings.
"""


def make_chrf() -> sacrebleu.CHRF:
    """The chrF++ the suite scores with (also used to resample its sentence statistics)."""
    return sacrebleu.CHRF(word_order=2)


class SacrebleuChrf(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation="Popović (2017), chrF++: words helping character n-grams.",
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"predictions": datasets.Value("string"), "references": datasets.Value("string")}
            ),
        )

    def _compute(self, predictions: list[str], references: list[str]) -> dict:
        chrf = make_chrf()
        return {"chrf": chrf.corpus_score(predictions, [references]).score, "signature": str(chrf.get_signature())}
