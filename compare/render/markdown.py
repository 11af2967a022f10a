"""`report.md`: the report as Markdown, figures linked as the PNG files beside it."""

from __future__ import annotations

from compare.diagnosis.training_curves_figure import FILENAME as TRAINING_CURVES
from compare.render import tables
from compare.render.diagnosis import diagnosis_tables, training_curve_table
from compare.render.distillation import distillation_tables
from compare.render.faithfulness import faithfulness_markdown
from compare.render.figures import figure_title
from compare.render.tables import Table
from compare.render.trust import trust_tables
from compare.render.tuning import tuning_tables


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def markdown_table(table: Table) -> str:
    lines = [f"### {table.title}", ""]
    lines.append("| " + " | ".join(table.header) + " |")
    lines.append("|" + "|".join("---" for _ in table.header) + "|")
    for i, row in enumerate(table.rows):
        cells = [_cell(c) for c in row]
        if i in table.muted_rows:
            cells = [f"*{c}*" if c else c for c in cells]
        lines.append("| " + " | ".join(cells) + " |")
    if table.note:
        lines += ["", table.note]
    return "\n".join(lines) + "\n"


def render_markdown(results: dict, analysis: dict, figures: list[str]) -> str:
    names = " vs ".join(results["models"])
    titles = tables.model_titles(results)
    parts = [
        f"# {names}: {results['split']} split of {results['data']['source']}",
        "",
        *([titles, ""] if titles else []),
        tables.task_line(results),
        "",
        tables.verdict_markdown(results),
        "",
        markdown_table(tables.headline(results)),
        *(markdown_table(t) for t in diagnosis_tables(results)),
        markdown_table(tables.difference(results)),
        *(markdown_table(t) for t in distillation_tables(results)),
    ]
    seed_table = tables.seeds(results)
    if seed_table:
        parts.append(markdown_table(seed_table))
    parts.append(markdown_table(tables.cost(results)))
    curve_table = training_curve_table(results)
    if curve_table:
        parts.append(markdown_table(curve_table))
    if TRAINING_CURVES in figures:
        parts += [f"![{figure_title(TRAINING_CURVES)}]({TRAINING_CURVES})", ""]
    parts += [markdown_table(t) for t in tuning_tables(results)]
    for name in (n for n in figures if n != TRAINING_CURVES):
        parts += [f"### {figure_title(name)}", "", f"![{figure_title(name)}]({name})", ""]
    parts.append(faithfulness_markdown(results, markdown_table))
    per_class = tables.per_class(results)
    if per_class:
        parts.append(markdown_table(per_class))
    parts += [markdown_table(t) for t in tables.error_tables(results, analysis)]
    parts += [markdown_table(t) for t in trust_tables(results)]
    parts += ["### Notes and settings", ""]
    parts += [f"- {note}" for note in results["data"]["notes"]]
    parts += [f"- {key}: {value}" for key, value in results["settings"].items()]
    parts += [f"- run {name}: `{path}`" for name, path in results["runs"].items()]
    env = results["environment"]
    parts += [
        f"- environment: Python {env.get('python')}, TensorFlow {env.get('tensorflow')}, {env.get('platform')}, "
        f"{env.get('cpu_count')} CPUs; created {results['created']}",
        "",
    ]
    return "\n".join(parts)
