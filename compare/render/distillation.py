"""The report's tables for more than two models: every pair (Holm-adjusted p), the gap the student closes, and where
the fine-tuned model's lead comes from (the self-pretrained model)."""

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
            p["winner"] or ("unsettled" if p.get("unsettled") else "none"),
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
        "the pair's 95% interval excludes 0; a pair is unsettled when a model in it had not finished learning (the "
        "diagnosis says which, with the command that gives it more room).",
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


LEAD_ROWS = {
    "lead": "the fine-tuned model's whole lead",
    "objective": "the pretraining objective on the task's own texts",
    "external_data": "external data (and the pretrained model's size and recipe)",
}


def lead_table(results: dict) -> Table | None:
    """results.json `lead_sources` as a table: the lead, and its two parts with their paired intervals."""
    lead = results.get("lead_sources")
    if not lead:
        return None
    metric = lead["metric"]
    unit = " (points)" if wording.is_fraction(metric) else ""
    rows = [
        [
            what,
            f"{lead[part]['a']} − {lead[part]['b']}",
            signed_score(metric, lead[part]["diff"]),
            signed_score_ci(metric, lead[part]["ci"]),
        ]
        for part, what in LEAD_ROWS.items()
    ]
    share, ci = lead["objective_share"], lead["objective_share_ci"]
    shown = "–" if share is None else f"{share * 100:.0f}%"
    interval = "" if not ci else f" [{ci[0] * 100:.0f}%, {ci[1] * 100:.0f}%]"
    return Table(
        f"Where the fine-tuned model's lead comes from: the pretraining objective explains {shown}{interval}",
        ["source", "difference", f"{wording.name(metric)} diff{unit}", f"95% CI{unit}"],
        rows,
        note="The self-pretrained model (scratch-pretrained: the from-scratch model pretrained with masked "
        "language modelling on the train split's own texts, in the same step budget) splits the lead: what the "
        "objective gives without any outside text, and what the pretrained checkpoint's external data adds. Paired "
        "bootstrap 95% intervals on the same test examples; the share is (scratch-pretrained − scratch) / "
        "(finetune − scratch).",
    )


def distillation_tables(results: dict) -> list[Table]:
    return [t for t in (pair_table(results), gap_table(results), lead_table(results)) if t is not None]
