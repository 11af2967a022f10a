"""The import graph between the top-level packages is the one docs/development.md lists ("Layers"), and `core`, the
ground floor, imports nothing above it: every `import` and `from ... import` of the product's modules, at the top of a
module or inside a function, read with `ast`."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("app", "compare", "core", "demo", "finetune", "scratch")
ABOVE_CORE = {"compare", "demo", "finetune", "scratch", "app"}
DOC = ROOT / "docs" / "development.md"


def imported_packages(path: Path) -> set[str]:
    """The suite's top-level packages a module imports (absolute imports; the suite uses no relative ones)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names & set(PACKAGES)


def import_graph() -> dict[str, set[str]]:
    """Each package's imports of the other packages, from every module in it (`app` is app.py)."""
    graph = defaultdict(set)
    for package in PACKAGES:
        files = [ROOT / "app.py"] if package == "app" else sorted((ROOT / package).rglob("*.py"))
        for path in files:
            graph[package] |= imported_packages(path) - {package}
    return dict(graph)


def documented_graph() -> dict[str, set[str]]:
    """The list under docs/development.md's "Layers": one `- **package** imports a, b` line per package."""
    section = DOC.read_text(encoding="utf-8").split("## Layers", 1)[1].split("\n## ", 1)[0]
    graph = {}
    for package, imports in re.findall(r"^- \*\*`?(\w+)(?:\.py)?`?\*\* imports (.+?)(?:[:.]|$)", section, re.M):
        graph[package] = set() if imports.startswith("nothing") else set(re.findall(r"`(\w+)`", imports))
    return graph


def test_core_imports_nothing_above_it() -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(found)
        for path in sorted((ROOT / "core").rglob("*.py"))
        if (found := imported_packages(path) & ABOVE_CORE)
    }
    assert offenders == {}, f"core imports a layer above it: {offenders}"


def test_the_import_graph_is_the_one_docs_development_lists() -> None:
    documented = documented_graph()
    assert set(documented) == set(PACKAGES)
    assert import_graph() == {package: documented[package] for package in PACKAGES}


def test_an_arrow_from_core_up_is_found(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("import numpy\n\n\ndef f():\n    from compare.scoring import metrics\n", encoding="utf-8")
    assert imported_packages(module) == {"compare"}
