"""The report's faithfulness section (results.json `faithfulness`, `compare.scoring.faithfulness`): the table of
each model's comprehensiveness and sufficiency beside random words', and a few examples with every model's words
highlighted by their attribution, side by side (HTML: background intensity; Markdown: the scores written out)."""

from __future__ import annotations

import html

from compare.render.tables import Table

TITLE = "Why each model decides: faithfulness of Integrated Gradients"
NOTE = (
    "Integrated Gradients over each model's token vectors (baseline: word pieces' vectors at zero), towards its "
    "answer. Comprehensiveness: how much the answer's probability drops when the top 1, 5, 10, 20 and 50% of words "
    "by attribution are removed (AOPC; higher is more faithful); sufficiency: how much it drops when only they are "
    "kept (lower is more faithful); each beside the same for words in a random order, and divided by the model's "
    "drop with no words at all (normalised), so that two models compare. IG beats random: the share of examples "
    "whose comprehensiveness beats random words'."
)


def faithfulness_table(results: dict) -> Table | None:
    """The table, or None when the report was made without `--faithfulness`."""
    section = results.get("faithfulness")
    if not section:
        return None
    header = [
        "Model",
        "Comprehensiveness (IG / random)",
        "normalised",
        "Sufficiency (IG / random)",
        "normalised",
        "IG beats random",
        "Completeness gap",
        "Time",
    ]
    rows = []
    for name, model in results["models"].items():
        entry = model.get("faithfulness")
        if entry is None:
            continue
        rows.append(
            [
                name,
                f"{entry['comprehensiveness_ig']:.3f} / {entry['comprehensiveness_random']:.3f}",
                _pair(entry, "comprehensiveness"),
                f"{entry['sufficiency_ig']:.3f} / {entry['sufficiency_random']:.3f}",
                _pair(entry, "sufficiency"),
                f"{entry['ig_beats_random']:.0%}",
                f"{entry['mean_gap']:.2%}",
                f"{entry['seconds']:.0f} s",
            ]
        )
    cost = (
        f" {section['examples']} examples of the split (seed {section['sample_seed']}); the attributions and the "
        f"faithfulness scores added {section['seconds']:.0f} s to the report."
    )
    return Table(TITLE, header, rows, note=NOTE + cost)


def _pair(entry: dict, measure: str) -> str:
    ig, random = entry[f"{measure}_ig_normalised"], entry[f"{measure}_random_normalised"]
    return "n/a" if ig is None else f"{ig:.2f} / {random:.2f}"


def highlighted_words(words: list[str], scores: list[float]) -> str:
    """Words as HTML spans whose background is as intense as their score is large: green for towards the answer,
    red for against it, relative to the input's largest score.

    >>> highlighted_words(["a", "<b>"], [0.5, -1.0])
    '<span class="attr" style="background: rgba(34, 160, 80, 0.50)" title="0.500">a</span> <span class="attr" style="background: rgba(214, 60, 60, 1.00)" title="-1.000">&lt;b&gt;</span>'
    """
    top = max((abs(score) for score in scores), default=0.0) or 1.0
    spans = []
    for word, score in zip(words, scores, strict=True):
        colour = "34, 160, 80" if score >= 0 else "214, 60, 60"
        spans.append(
            f'<span class="attr" style="background: rgba({colour}, {abs(score) / top:.2f})" title="{score:.3f}">'
            f"{html.escape(word)}</span>"
        )
    return " ".join(spans)


def plain_words(words: list[str], scores: list[float]) -> str:
    """Words with their scores, the top one in bold, for Markdown.

    >>> plain_words(["a", "dull", "film"], [0.01, 0.52, -0.2])
    'a (+0.01) **dull (+0.52)** film (-0.20)'
    """
    top = max(range(len(scores)), key=scores.__getitem__, default=-1)
    shown = [f"{word} ({score:+.2f})" for word, score in zip(words, scores, strict=True)]
    return " ".join(f"**{text}**" if i == top else text for i, text in enumerate(shown))


def faithfulness_html(results: dict, table_html) -> str:
    """The section in HTML ("" without it); `table_html` renders a `Table`."""
    table = faithfulness_table(results)
    if table is None:
        return ""
    examples = []
    for example in results["faithfulness"]["highlighted"]:
        cells = "".join(
            f"<td><b>{html.escape(name)}</b> → {html.escape(str(row['target']))}<br>"
            f"{highlighted_words(row['words'], row['scores'])}</td>"
            for name, row in example["models"].items()
        )
        examples.append(f"<tr>{cells}</tr>")
    style = "<style>.attr{padding:1px 2px;border-radius:3px}</style>"
    return (
        table_html(table)
        + f'{style}<div class="card"><p class="note">Examples (row {", ".join(str(e["index"]) for e in results["faithfulness"]["highlighted"])} '
        "of the split): each word's background is its attribution towards the model's answer (green: for it, "
        "red: against it), relative to the input's largest.</p>"
        f"<table><tbody>{''.join(examples)}</tbody></table></div>"
    )


def faithfulness_markdown(results: dict, table_markdown) -> str:
    """The section in Markdown ("" without it); `table_markdown` renders a `Table`."""
    table = faithfulness_table(results)
    if table is None:
        return ""
    lines = [table_markdown(table), "Examples, each word with its attribution towards the model's answer:", ""]
    for example in results["faithfulness"]["highlighted"]:
        lines.append(f"- row {example['index']}:")
        for name, row in example["models"].items():
            lines.append(f"  - {name} → {row['target']}: {plain_words(row['words'], row['scores'])}")
    return "\n".join(lines) + "\n"
