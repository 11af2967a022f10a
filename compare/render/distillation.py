"""The report's tables for more than two models: every pair (Holm-adjusted p) and the gap the student closes."""

from __future__ import annotations

from compare.render.format import score, signed_score, signed_score_ci, training_time
from compare.render.tables import Table
from compare.scoring import wording
from compare.scoring.statistics import p_value
from core.sides import FROM_SCRATCH, PRETRAINED, STUDENT


def pair_table(results: dict) -> Table | None:
    pairs = results.get("comparisons")
    if not pairs:
        return None
    first, second = wording.of_results(results).scores
    unit = " (points)" if wording.is_fraction(first) else ""
    test = "McNemar" if "mcnemar_p" in pairs[0] else "paired bootstrap"
    holm = "mcnemar_p_holm" if "mcnemar_p" in pairs[0] else "bootstrap_p_holm"
    rows = [
        [
            f"{p['a']} − {p['b']}",
            signed_score(first, p[f"{first}_diff"]),
            signed_score_ci(first, p[f"{first}_diff_ci"]),
            signed_score(second, p[f"{second}_diff"]),
            f"{p_value(p):.3g}",
            f"{p[holm]:.3g}",
            p["winner"] or "none",
        ]
        for p in pairs
    ]
    return Table(
        "Every pair (paired bootstrap)",
        [
            "pair",
            f"{wording.name(first)} diff{unit}",
            f"95% CI{unit}",
            f"{wording.name(second)} diff{unit}",
            f"{test} p",
            "Holm p",
            "winner",
        ],
        rows,
        note=f"Holm p: {test} p-values adjusted for testing every pair together. A winner is named only when "
        "the pair's 95% interval excludes 0.",
    )


def gap_table(results: dict) -> Table | None:
    gap = results.get("gap_closed")
    if not gap:
        return None
    models, metric = results["models"], gap.get("metric", "accuracy")
    label = wording.name(metric) + (" %" if wording.is_fraction(metric) else "")
    rows = [
        [name, score(metric, models[name][metric]), training_time(models[name])]
        for name in (PRETRAINED, FROM_SCRATCH, STUDENT)
    ]
    value = "–" if gap["value"] is None else f"{gap['value'] * 100:.0f}%"
    ci = "–" if not gap["ci"] else f"[{gap['ci'][0] * 100:.0f}%, {gap['ci'][1] * 100:.0f}%]"
    return Table(
        f"Gap closed by distillation: {value} {ci}",
        ["model", label, "training time"],
        rows,
        note=f"(scratch-distilled − scratch) / (finetune − scratch) in {wording.name(metric)}, with its paired "
        "bootstrap 95% interval: 0% is no gain over the from-scratch model, 100% the whole gap. The student's "
        "training time is given with the time its teacher took to label the transfer set; the teacher's own "
        "training is not in it.",
    )


def distillation_tables(results: dict) -> list[Table]:
    return [t for t in (pair_table(results), gap_table(results)) if t is not None]
