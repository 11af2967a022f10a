"""The report's tables and figure on how far to trust the models: calibration before and after temperature scaling,
and the gold labels cleanlab doubts (results.json `models.*.ece*`, `label_audit`)."""

from __future__ import annotations

from compare.render.figures import reliability_diagrams
from compare.render.format import score, score_ci
from compare.render.tables import Table
from compare.scoring import wording

UNCALIBRATED_FIGURE = "reliability_uncalibrated.png"


def calibrated_anywhere(results: dict) -> bool:
    return any(entry.get("temperatures") for entry in results["models"].values())


def calibration_table(results: dict) -> Table | None:
    """Each model's temperatures and its ECE before and after calibration, with 95% bootstrap intervals."""
    models = results["models"]
    if not any("ece_uncalibrated" in entry for entry in models.values()):
        return None
    rows = []
    for name, entry in models.items():
        temperatures = entry.get("temperatures")
        shown = "none (T = 1)" if not temperatures else ", ".join(f"{t:.2f}" for t in temperatures)
        rows.append(
            [
                name,
                shown,
                f"{entry['ece_uncalibrated']:.3f}",
                _interval(entry["ece_uncalibrated_ci"]),
                f"{entry['ece']:.3f}",
                _interval(entry["ece_ci"]),
            ]
        )
    note = (
        "Temperature scaling divides each model's scores by the temperature fitted on validation (one for all classes, "
        "or one per label), which leaves every decision's order as it was; the report scores the calibrated "
        "probabilities the models give. ECE: expected calibration error over "
        f"{results['settings']['ece_bins']} equal-width bins, lower is better."
    )
    header = ["model", "temperature", "ECE before", "95% CI", "ECE after", "95% CI"]
    return Table("Calibration: before and after temperature scaling", header, rows, note=note)


def _interval(bounds: list[float]) -> str:
    return f"[{bounds[0]:.3f}, {bounds[1]:.3f}]"


def audit_tables(results: dict) -> list[Table]:
    """The label audit's summary, each model's headline without the doubted examples, and the most doubted ones."""
    audit = results.get("label_audit")
    if not audit:
        return []
    if not audit["audited"]:
        return [Table("Gold labels to doubt", ["note"], [[audit["note"]]])]
    metric, split = results["headline_metric"], results["split"]
    kept = audit["without_doubted"]
    summary = Table(
        "Gold labels to doubt",
        ["split", "examples", "doubted", "share"],
        [
            [name, str(s["n"]), str(s["doubted"]), f"{s['doubted'] / max(s['n'], 1):.1%}"]
            for name, s in audit["splits"].items()
        ],
        note=f"cleanlab flags a gold label when the models' out-of-sample probabilities confidently favour another "
        f"({audit['method']}). Each doubted example is listed in results.json `label_issues`.",
    )
    models = results["models"]
    name = wording.name(metric)
    scores = Table(
        f"{name} on {split} without the doubted examples",
        [
            "model",
            f"{name} (all {results['n']})",
            "95% CI",
            f"without doubted ({kept[next(iter(kept))]['n']})",
            "95% CI",
        ],
        [
            [
                model,
                score(metric, models[model][metric]),
                score_ci(metric, models[model].get(f"{metric}_ci")),
                score(metric, row[metric]),
                score_ci(metric, row[f"{metric}_ci"]),
            ]
            for model, row in kept.items()
        ],
        note="If the doubted labels are errors, the scores without them are nearer each model's true quality; the "
        "two do not differ by chance alone where their intervals do not overlap much.",
    )
    names = list(models)
    pairs = any("text_pair" in row for row in audit["examples"])
    examples = Table(
        f"The most doubted {split} labels",
        ["text", *(["second text"] if pairs else []), "given", "suggested", "quality", *names],
        [
            [
                row["text"],
                *([row["text_pair"]] if pairs else []),
                _answer(row["given"]),
                _answer(row["suggested"]),
                f"{row['score']:.3f}",
                *(_probabilities(row["models"][model]["probs"]) for model in names),
            ]
            for row in audit["examples"]
        ],
        note="Label quality is cleanlab's score of the given label under both models (0 to 1; lowest first).",
    )
    return [summary, scores, examples]


def _answer(answer: str | list[str]) -> str:
    return (", ".join(answer) or "(none)") if isinstance(answer, list) else str(answer)


def _probabilities(probs: dict[str, float]) -> str:
    """The likeliest few labels with their probabilities: `pos 0.97, neg 0.02`."""
    top = sorted(probs.items(), key=lambda item: -item[1])[:3]
    return ", ".join(f"{label} {p:.2f}" for label, p in top)


def trust_tables(results: dict) -> list[Table]:
    """The report's calibration and label-audit tables, in order (none for a report without them)."""
    table = calibration_table(results)
    return [*([table] if table else []), *audit_tables(results)]


def trust_figures(results: dict) -> dict[str, bytes]:
    """The reliability diagrams before calibration, beside the report's own (after), when any model was calibrated."""
    if not calibrated_anywhere(results):
        return {}
    before = {
        name: {"reliability": entry["reliability_uncalibrated"], "ece": entry["ece_uncalibrated"]}
        for name, entry in results["models"].items()
    }
    return {UNCALIBRATED_FIGURE: reliability_diagrams(before, "before temperature scaling")}
