"""`report.md`: the report as Markdown, figures linked as the PNG files beside it."""

from __future__ import annotations

from compare.render import tables
from compare.render.faithfulness import faithfulness_markdown
from compare.render.figures import figure_title
from compare.render.outline import outline
from compare.render.tables import Table


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


class MarkdownParts:
    """The outline's parts as Markdown (`compare.render.outline.Renderer`), the figures linked as the PNG files beside
    the report, each under its title but the one placed on its own."""

    def __init__(self, figures: list[str]) -> None:
        self.names = figures

    def table(self, table: Table) -> list[str]:
        return [markdown_table(table)]

    def figure(self, name: str) -> list[str]:
        return [f"![{figure_title(name)}]({name})", ""] if name in self.names else []

    def figures(self, skip: str) -> list[str]:
        return [
            line
            for name in self.names
            if name != skip
            for line in (f"### {figure_title(name)}", "", f"![{figure_title(name)}]({name})", "")
        ]

    def faithfulness(self, results: dict) -> list[str]:
        return [faithfulness_markdown(results, markdown_table)]


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
        *outline(results, analysis, MarkdownParts(figures)),
        "### Notes and settings",
        "",
    ]
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
