"""The report's tables as plain rows of strings, shared by the Markdown and the HTML renderers."""

from __future__ import annotations

from dataclasses import dataclass, field

from compare.kinds import reported
from compare.render.format import count, pct, score, score_ci, signed_score, signed_score_ci, size, training_time
from compare.scoring import wording
from compare.scoring.statistics import significance_text


@dataclass
class Table:
    title: str
    header: list[str]
    rows: list[list[str]]
    muted_rows: set[int] = field(default_factory=set)  # reference rows, shown in a lighter style
    note: str = ""


def verdict(results: dict) -> tuple[str, str]:
    """The verdict as a heading ("scratch wins" / "No clear winner" / "Unsettled", the model behind still improving)
    and the sentence that explains it."""
    c = results["comparison"]
    head = f"{c['winner']} wins" if c["winner"] else "Unsettled" if c.get("unsettled") else "No clear winner"
    reason = c["verdict"].removeprefix("No clear winner: ").removeprefix("Unsettled: ")
    return head, reason[:1].upper() + reason[1:]


def model_titles(results: dict) -> str:
    """`Models: finetune (Fine-tuned BERT), scratch (From-scratch Transformer).`, each model's side's title; ""
    when results.json records none."""
    titled = [f"{name} ({m['title']})" for name, m in results["models"].items() if m.get("title")]
    return f"Models: {', '.join(titled)}." if titled else ""


def task_line(results: dict) -> str:
    """`Task: multi-label classification (7 labels), ranked by macro-F1; each input is a pair of texts, from the
    columns sentence1 and sentence2.`"""
    kind = wording.of_results(results)
    line = f"Task: {reported(kind).describe_labels(results['labels'])}, ranked by {wording.name(kind.headline)}"
    columns = results.get("columns")
    if columns:
        text = " + ".join(columns["text"])
        line += f"; each input is a pair of texts, from the columns {text} and {columns['text_pair']}"
    return line + "."


def verdict_markdown(results: dict) -> str:
    """`**Verdict: finetune wins.** Finetune beats scratch by ...`, as report.md and the app lead with it."""
    head, reason = verdict(results)
    return f"**Verdict: {head}.** {reason}"


def headline(results: dict) -> Table:
    """The kind's two scores of every model with their intervals (and, with several seeds, the headline's spread),
    its other scores, then the reference rows."""
    kind = wording.of_results(results)
    first, second = kind.scores
    seeds = results.get("seeds", {})
    several = bool(seeds) and min(len(s["seeds"]) for s in seeds.values()) > 1
    extras = reported(kind).table_columns  # its other scores: (key, header, format)
    rows = []
    for name, m in results["models"].items():
        row = [name, f"{score(first, m[first])} {score_ci(first, m[f'{first}_ci'])}"]
        if several:
            row.append(f"{score(first, seeds[name][f'{first}_mean'])} ± {score(first, seeds[name][f'{first}_std'])}")
        row.append(f"{score(second, m[second])} {score_ci(second, m[f'{second}_ci'])}")
        rows.append(row + [_extra(m, column, form) for column, _, form in extras])
    muted = set()
    for key, b in results["baselines"].items():
        muted.add(len(rows))
        row = [
            wording.REFERENCE_NAMES.get(key, key),
            score(first, b.get(first)),  # a reference row scores what it can: a kind's own score may be missing
            *([""] if several else []),
            score(second, b.get(second)),
        ]
        rows.append(row + [_extra(b, column, form) for column, _, form in extras])
    header = ["model", _score_header(first), _score_header(second), *(title for _, title, _ in extras)]
    note = "Intervals: percentile bootstrap over the examples. The reference rows are trained on the same train split."
    if results.get("columns"):
        note += " Each input is a pair of texts; the TF-IDF reference rows read both."
    note += reported(kind).table_note
    if several:
        n_seeds = len(next(iter(seeds.values()))["seeds"])
        header.insert(2, f"{_score_header(first, interval=False)} over {n_seeds} seeds (mean ± sd)")
        note += " Interval columns score each model's first seed; the seed column shows the spread across seeds."
    return Table(f"Quality on the {results['split']} split ({results['n']:,} examples)", header, rows, muted, note)


def _score_header(metric: str, interval: bool = True) -> str:
    """`accuracy % [95% CI]`, `Spearman [95% CI]`."""
    unit = " %" if wording.is_fraction(metric) else ""
    return f"{wording.name(metric)}{unit}" + (" [95% CI]" if interval else "")


def _extra(entry: dict, key: str, form: str) -> str:
    if entry.get(key) is None:
        return ""
    return pct(entry[key]) if form == "pct" else form.format(entry[key])


def difference(results: dict) -> Table:
    """The first model minus the second in the kind's two scores, with the paired intervals and the kind's test."""
    c = results["comparison"]
    metrics = wording.of_results(results).scores
    unit = " (points)" if wording.is_fraction(metrics[0]) else ""
    rows = [[wording.name(m), signed_score(m, c[f"{m}_diff"]), signed_score_ci(m, c[f"{m}_diff_ci"])] for m in metrics]
    if "mcnemar_p" in c:
        note = (
            f"McNemar exact test: {c['a']} right and {c['b']} wrong on {c['mcnemar_b']} examples, the reverse on "
            f"{c['mcnemar_c']}; p = {c['mcnemar_p']:.3g}."
        )
    else:
        note = (
            f"Paired bootstrap test of the {wording.name(metrics[0])} difference: {significance_text(c)} (twice the "
            "share of resamples on the losing side of 0)."
        )
    if c.get("disagreements") is not None:
        note += f" The models disagree on {c['disagreements']} examples."
    return Table(
        f"{c['a']} minus {c['b']} (paired bootstrap)",
        ["measure", f"difference{unit}", f"95% CI{unit}"],
        rows,
        note=note,
    )


def training_length(m: dict) -> str:
    """A model's optimizer steps and passes over its train split ("500 (3.1)"), or its epochs where a report from
    before the counts has only those.

    >>> training_length({"steps": 500, "passes": 3.093}), training_length({"epochs": 4})
    ('500 (3.1)', '4 epochs')
    """
    if m.get("steps") is None:
        return wording.plural(m["epochs"], "epoch") if m.get("epochs") is not None else "–"
    passes = m.get("passes")
    return f"{m['steps']:,}" + (f" ({passes:.1f})" if passes is not None else "")


def cost(results: dict) -> Table:
    rows = []
    for name, m in results["models"].items():
        rows.append(
            [
                name,
                count(m["params"]),
                size(m["disk_bytes"]),
                count(m.get("train_rows")),
                training_length(m),
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
            "steps (passes over train)",
            "training time",
            "latency p50 / p95 (ms)",
            "texts/s (batched)",
        ],
        rows,
        note="Training figures come from each run's run.json; latency (one text per call) and batched throughput "
        "were measured while this report was made.",
    )


def seeds(results: dict) -> Table | None:
    """Each model's headline score per seed, and the mean ± sd of the kind's two scores across seeds."""
    section = results.get("seeds", {})
    if not section or max(len(s["seeds"]) for s in section.values()) < 2:
        return None
    first, second = wording.of_results(results).scores
    rows = []
    for name, s in section.items():
        rows.append(
            [
                name,
                ", ".join(map(str, s["seeds"])),
                ", ".join(score(first, v) for v in s[first]),
                f"{score(first, s[f'{first}_mean'])} ± {score(first, s[f'{first}_std'])}",
                f"{score(second, s[f'{second}_mean'])} ± {score(second, s[f'{second}_std'])}",
            ]
        )
    diffs = results["comparison"].get(f"seed_{first}_diffs") or []
    unit = " (points)" if wording.is_fraction(first) else ""
    return Table(
        "Across training seeds",
        [
            "model",
            "seeds",
            f"{_score_header(first, interval=False)} per seed",
            f"{_score_header(first, interval=False)} mean ± sd",
            f"{_score_header(second, interval=False)} mean ± sd",
        ],
        rows,
        note=f"Per-seed {wording.name(first)} differences{unit}: "
        + ", ".join(wording.signed_number(first, d) for d in diffs),
    )


def per_class(results: dict) -> Table | None:
    """Precision, recall and F1 of each class (single label) or label (multi-label, with each model's threshold and
    calibration error for it); None for regression."""
    kind = wording.of_results(results)
    unit = kind.unit
    if unit is None:  # no labels to score one by one
        return None
    names = list(results["models"])
    header = [unit, "support"] + [f"{n} P / R / F1" for n in names]
    if reported(kind).decides_by_thresholds:
        header += [f"{n} threshold / ECE" for n in names]
    rows = []
    for k, label in enumerate(results["labels"]):
        support = results["models"][names[0]]["per_class"][label]["support"]
        cells = []
        for n in names:
            c = results["models"][n]["per_class"][label]
            cells.append(f"{c['precision']:.3f} / {c['recall']:.3f} / {c['f1']:.3f}")
        if reported(kind).decides_by_thresholds:
            for n in names:
                m = results["models"][n]
                cells.append(f"{m['thresholds'][k]:.3f} / {m['per_class'][label]['ece']:.3f}")
        rows.append([label, str(support), *cells])
    return Table(f"Per {unit}", header, rows, note=reported(kind).per_class_note)


def examples(title: str, rows: list[dict], names: list[str], note: str = "") -> Table:
    """Example rows of `compare.scoring.error_analysis`: each model's answer, marked right or wrong, beside the
    gold one; a pair task's second text in a column of its own."""
    pairs = any("text_pair" in row for row in rows)
    header = ["text", *(["second text"] if pairs else []), "gold", *names]
    body = []
    for row in rows:
        cells = [_answer(row["models"][n], row["gold"]) for n in names]
        second = [row["text_pair"]] if pairs else []
        body.append([row["text"], *second, _gold(row["gold"]), *cells])
    return Table(title, header, body, note=note)


def _gold(gold) -> str:
    if isinstance(gold, list):
        return ", ".join(gold) or "(none)"
    return f"{gold:.2f}" if isinstance(gold, float) else str(gold)


def _answer(model: dict, gold) -> str:
    """`✓ positive (0.93)`, `✗ joy, fear` or `3.21 (+0.45)` (the value and its error)."""
    if "value" in model:
        return f"{model['value']:.2f} ({model['value'] - gold:+.2f})"
    if isinstance(model["label"], list):
        return f"{'✓' if model['right'] else '✗'} {_gold(model['label'])}"
    mark = "✓" if model["label"] == gold else "✗"
    return f"{mark} {model['label']} ({model['probability']:.2f})"


def error_tables(results: dict, analysis: dict) -> list[Table]:
    """Where the models disagree, and each model's most confident mistakes (largest errors, for regression)."""
    names, kind, n = list(results["models"]), wording.of_results(results), results["n"]
    if kind.gives_values:  # values always differ: the examples they differ on most
        first = examples(
            "Where the models differ most",
            analysis["disagreements"],
            names,
            "The examples whose predicted values lie furthest apart (each value with its error against gold).",
        )
        mistakes = "Largest errors of"
    else:
        first = examples(
            "Where the models disagree",
            analysis["disagreements"],
            names,
            f"{analysis['disagreement_count']} of {n} examples; {reported(kind).disagreement_order}.",
        )
        mistakes = "Most confident mistakes of"
    return [
        first,
        *(examples(f"{mistakes} {name}", rows, names) for name, rows in analysis["confident_mistakes"].items()),
    ]
