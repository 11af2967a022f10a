"""The report's tables as plain rows of strings, shared by the Markdown and the HTML renderers."""

from __future__ import annotations

from dataclasses import dataclass, field

from compare.render.format import ci, count, pct, signed_ci, size, training_time

BASELINE_NAMES = {"majority": "majority class", "tfidf_logreg": "TF-IDF + logistic regression"}


@dataclass
class Table:
    title: str
    header: list[str]
    rows: list[list[str]]
    muted_rows: set[int] = field(default_factory=set)  # reference rows, shown in a lighter style
    note: str = ""


def verdict(results: dict) -> tuple[str, str]:
    """The verdict as a heading ("scratch wins" / "No clear winner") and the sentence that explains it."""
    c = results["comparison"]
    head = f"{c['winner']} wins" if c["winner"] else "No clear winner"
    reason = c["verdict"].removeprefix("No clear winner: ")
    return head, reason[:1].upper() + reason[1:]


def model_titles(results: dict) -> str:
    """`Models: finetune (Fine-tuned BERT), scratch (From-scratch Transformer).`, each model's side's title; ""
    when results.json records none."""
    titled = [f"{name} ({m['title']})" for name, m in results["models"].items() if m.get("title")]
    return f"Models: {', '.join(titled)}." if titled else ""


def verdict_markdown(results: dict) -> str:
    """`**Verdict: finetune wins.** Finetune beats scratch by ...`, as report.md and the app lead with it."""
    head, reason = verdict(results)
    return f"**Verdict: {head}.** {reason}"


def headline(results: dict) -> Table:
    seeds = results.get("seeds", {})
    several = bool(seeds) and min(len(s["seeds"]) for s in seeds.values()) > 1
    rows = []
    for name, m in results["models"].items():
        row = [name, f"{pct(m['accuracy'])} {ci(m['accuracy_ci'])}"]
        if several:
            row.append(f"{pct(seeds[name]['accuracy_mean'])} ± {pct(seeds[name]['accuracy_std'])}")
        row += [
            f"{pct(m['macro_f1'])} {ci(m['macro_f1_ci'])}",
            f"{m['mcc']:.3f}",
            f"{m['ece']:.3f}",
            f"{m['log_loss']:.3f}",
        ]
        rows.append(row)
    muted = set()
    for key, b in results["baselines"].items():
        muted.add(len(rows))
        rows.append([BASELINE_NAMES.get(key, key), pct(b["accuracy"]), *([""] if several else []), pct(b["macro_f1"])])
        rows[-1] += [""] * 3
    header = ["model", "accuracy % [95% CI]", "macro-F1 % [95% CI]", "MCC", "ECE", "log loss"]
    note = "Intervals: percentile bootstrap over the examples. The reference rows are trained on the same train split."
    if several:
        n_seeds = len(next(iter(seeds.values()))["seeds"])
        header.insert(2, f"accuracy % over {n_seeds} seeds (mean ± sd)")
        note += " Interval columns score each model's first seed; the seed column shows the spread across seeds."
    return Table(f"Quality on the {results['split']} split ({results['n']:,} examples)", header, rows, muted, note)


def difference(results: dict) -> Table:
    c = results["comparison"]
    return Table(
        f"{c['a']} minus {c['b']} (paired bootstrap)",
        ["measure", "difference (points)", "95% CI (points)"],
        [
            ["accuracy", f"{c['accuracy_diff'] * 100:+.2f}", signed_ci(c["accuracy_diff_ci"])],
            ["macro-F1", f"{c['macro_f1_diff'] * 100:+.2f}", signed_ci(c["macro_f1_diff_ci"])],
        ],
        note=(
            f"McNemar exact test: {c['a']} right and {c['b']} wrong on {c['mcnemar_b']} examples, the reverse on "
            f"{c['mcnemar_c']}; p = {c['mcnemar_p']:.3g}. The models disagree on {c.get('disagreements', '–')} examples."
        ),
    )


def cost(results: dict) -> Table:
    rows = []
    for name, m in results["models"].items():
        rows.append(
            [
                name,
                count(m["params"]),
                size(m["disk_bytes"]),
                count(m.get("train_rows")),
                str(m.get("epochs", "–")),
                training_time(m),
                f"{m['latency_p50_ms']:.1f} / {m['latency_p95_ms']:.1f}",
                f"{m['throughput_per_s']:.0f}",
            ]
        )
    return Table(
        "Cost",
        [
            "model",
            "parameters",
            "size on disk",
            "train rows",
            "epochs",
            "training time",
            "latency p50 / p95 (ms)",
            "texts/s (batched)",
        ],
        rows,
        note="Training figures come from each run's run.json; latency (one text per call) and batched throughput "
        "were measured while this report was made.",
    )


def seeds(results: dict) -> Table | None:
    section = results.get("seeds", {})
    if not section or max(len(s["seeds"]) for s in section.values()) < 2:
        return None
    rows = []
    for name, s in section.items():
        rows.append(
            [
                name,
                ", ".join(map(str, s["seeds"])),
                ", ".join(pct(v) for v in s["accuracy"]),
                f"{pct(s['accuracy_mean'])} ± {pct(s['accuracy_std'])}",
                f"{pct(s['macro_f1_mean'])} ± {pct(s['macro_f1_std'])}",
            ]
        )
    diffs = results["comparison"].get("seed_accuracy_diffs") or []
    return Table(
        "Across training seeds",
        ["model", "seeds", "accuracy % per seed", "accuracy % mean ± sd", "macro-F1 % mean ± sd"],
        rows,
        note="Per-seed accuracy differences (points): " + ", ".join(f"{d * 100:+.1f}" for d in diffs),
    )


def per_class(results: dict) -> Table:
    names = list(results["models"])
    header = ["class", "support"] + [f"{n} P / R / F1" for n in names]
    rows = []
    for label in results["labels"]:
        support = results["models"][names[0]]["per_class"][label]["support"]
        cells = []
        for n in names:
            c = results["models"][n]["per_class"][label]
            cells.append(f"{c['precision']:.3f} / {c['recall']:.3f} / {c['f1']:.3f}")
        rows.append([label, str(support), *cells])
    return Table("Per class", header, rows)


def examples(title: str, rows: list[dict], names: list[str], note: str = "") -> Table:
    header = ["text", "gold"] + names
    body = []
    for row in rows:
        cells = []
        for n in names:
            m = row["models"][n]
            mark = "✓" if m["label"] == row["gold"] else "✗"
            cells.append(f"{mark} {m['label']} ({m['probability']:.2f})")
        body.append([row["text"], row["gold"], *cells])
    return Table(title, header, body, note=note)


def error_tables(results: dict, analysis: dict) -> list[Table]:
    names = list(results["models"])
    tables = [
        examples(
            "Where the models disagree",
            analysis["disagreements"],
            names,
            f"{analysis['disagreement_count']} of {results['n']} examples; the most confident disagreements first "
            "(label and the probability the model gave it).",
        )
    ]
    for name, rows in analysis["confident_mistakes"].items():
        tables.append(examples(f"Most confident mistakes of {name}", rows, names))
    return tables
