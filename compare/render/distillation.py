"""The report's tables for more than two models: every pair (Holm-adjusted McNemar p) and the gap the student closes."""

from __future__ import annotations

from compare.render.format import pct, signed_ci, training_time
from compare.render.tables import Table
from core.sides import FROM_SCRATCH, PRETRAINED, STUDENT


def pair_table(results: dict) -> Table | None:
    pairs = results.get("comparisons")
    if not pairs:
        return None
    rows = [
        [
            f"{p['a']} − {p['b']}",
            f"{p['accuracy_diff'] * 100:+.2f}",
            signed_ci(p["accuracy_diff_ci"]),
            f"{p['macro_f1_diff'] * 100:+.2f}",
            f"{p['mcnemar_p']:.3g}",
            f"{p['mcnemar_p_holm']:.3g}",
            p["winner"] or "none",
        ]
        for p in pairs
    ]
    return Table(
        "Every pair (paired bootstrap)",
        [
            "pair",
            "accuracy diff (points)",
            "95% CI (points)",
            "macro-F1 diff (points)",
            "McNemar p",
            "Holm p",
            "winner",
        ],
        rows,
        note="Holm p: McNemar's p-values adjusted for testing every pair together. A winner is named only when "
        "the pair's 95% interval excludes 0.",
    )


def gap_table(results: dict) -> Table | None:
    gap = results.get("gap_closed")
    if not gap:
        return None
    models = results["models"]
    rows = [
        [name, pct(models[name]["accuracy"]), training_time(models[name])]
        for name in (PRETRAINED, FROM_SCRATCH, STUDENT)
    ]
    value = "–" if gap["value"] is None else f"{gap['value'] * 100:.0f}%"
    ci = "–" if not gap["ci"] else f"[{gap['ci'][0] * 100:.0f}%, {gap['ci'][1] * 100:.0f}%]"
    return Table(
        f"Gap closed by distillation: {value} {ci}",
        ["model", "accuracy %", "training time"],
        rows,
        note="(scratch-distilled − scratch) / (finetune − scratch) in accuracy, with its paired bootstrap 95% interval: "
        "0% is no gain over the from-scratch model, 100% the whole gap. The student's training time is given "
        "with the time its teacher took to label the transfer set; the teacher's own training is not in it.",
    )


def distillation_tables(results: dict) -> list[Table]:
    return [t for t in (pair_table(results), gap_table(results)) if t is not None]
