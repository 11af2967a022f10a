"""The documentation holds: every command line README.md and docs/usage.md show runs, and every link resolves.

How each line of a `bash`/`sh` block is run:
- `python -m MODULE ...` and `python app.py ...`: with `--help` appended, exit status 0 and a usage text; every
  flag the line uses must be one the command's help lists, and every option the help lists must be documented in
  docs/usage.md. The lines of one entry point run in one subprocess (`HELP_DRIVER`), which imports it once.
- The lines in `RUN_ON_TINY_DATA`: for real, as written, on tiny data this test writes.
- `make TARGET [VAR=value]`: `make -n` (a dry run), exit status 0.
- `source FILE`: FILE exists. `export NAME=value`: NAME is a variable the suite reads.
A line of any other shape fails the test: a command line that is not meant to run belongs in a `text` block.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shlex
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from tests.conftest import separable_rows

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
USAGE = ROOT / "docs" / "usage.md"
COMMAND_DOCS = (README, USAGE)
MARKDOWN = (README, *sorted((ROOT / "docs").glob("*.md")))
MAX_README_LINES = 250

# Own-data lines of the README run for real (in a folder holding the README's reviews.csv, grown to 60 rows), in
# this order; each must stay in the README as written here.
RUN_ON_TINY_DATA = (
    "python -m scratch --train-file reviews.csv --text-column review --label-column stars --output-dir runs/reviews",
    "python -m compare predict --runs runs/reviews --input reviews.csv --text-column review --output labelled.csv",
)

# Runs each documented command line of one entry point with --help in this one process: argv lists in, each
# exit status and output out (to a JSON file, as the commands may print to stdout themselves).
HELP_DRIVER = """
import contextlib, io, json, runpy, sys
entry, lines, out = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
results = []
for argv in lines:
    sys.argv = [entry, *argv]
    text, status = io.StringIO(), 0
    with contextlib.redirect_stdout(text), contextlib.redirect_stderr(text):
        try:
            if entry.endswith(".py"):
                runpy.run_path(entry, run_name="__main__")
            else:
                runpy.run_module(entry, run_name="__main__", alter_sys=True)
        except SystemExit as error:
            status = error.code if isinstance(error.code, int) else (0 if error.code is None else 1)
    results.append({"status": status, "output": text.getvalue()})
with open(out, "w", encoding="utf-8") as handle:
    json.dump(results, handle)
"""


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(info string, body) of every fenced code block of a Markdown text."""
    return [(m.group(1).strip(), m.group(2)) for m in re.finditer(r"^```([^\n]*)\n(.*?)^```", text, re.M | re.S)]


def command_lines(path: Path) -> list[list[str]]:
    """The command lines of the `bash`/`sh` blocks of `path`, as argument lists (continuations joined, comments off)."""
    lines = []
    for info, body in fenced_blocks(path.read_text(encoding="utf-8")):
        if info.split()[:1] not in (["bash"], ["sh"]):
            continue
        for line in body.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words:
                lines.append(words)
    return lines


def python_entry(words: list[str]) -> tuple[str, list[str]] | None:
    """`(module or script, its arguments)` of a `python -m MODULE ...` or `python app.py ...` line, else None."""
    if words[0] not in ("python", ".venv/bin/python"):
        return None
    if words[1] == "-m":
        return words[2], words[3:]
    return words[1], words[2:]


ALL_LINES = [(path.relative_to(ROOT).as_posix(), words) for path in COMMAND_DOCS for words in command_lines(path)]
PYTHON_LINES = [(where, python_entry(words)) for where, words in ALL_LINES if python_entry(words)]
ENTRIES = sorted({entry for _, (entry, _) in PYTHON_LINES})


def documented_options(help_text: str) -> set[str]:
    """The long options an argparse help lists (the option column of its `  --name ...` lines), spelled with dashes."""
    options = set()
    for line in help_text.splitlines():
        if re.match(r"  -", line):
            names = re.split(r"\s{2,}", line.strip())[0]
            options |= {name.replace("_", "-") for name in re.findall(r"--[\w-]+", names)}
    return options - {"--help"}


def flags(arguments: list[str]) -> set[str]:
    """The flags a command line gives (`--name` or `--name=value`; quoted flag strings are values)."""
    return {a.split("=")[0].replace("_", "-") for a in arguments if re.fullmatch(r"--[a-zA-Z][\w-]*(=.*)?", a)}


def test_every_documented_line_is_one_this_test_runs() -> None:
    known = {"python", ".venv/bin/python", "make", "source", "export"}
    odd = [f"{where}: {shlex.join(words)}" for where, words in ALL_LINES if words[0] not in known]
    assert not odd, "command lines this test does not know how to run (put them in a text block?):\n" + "\n".join(odd)
    assert len(PYTHON_LINES) >= 30 and {"finetune", "scratch", "compare", "app.py"} <= set(ENTRIES), ENTRIES
    shown = {shlex.join(words) for _, words in ALL_LINES if python_entry(words)}
    assert set(RUN_ON_TINY_DATA) <= shown, "a line this test runs on tiny data is no longer in the docs"


@pytest.mark.slow
@pytest.mark.parametrize("entry", ENTRIES)
def test_documented_commands_answer_help(entry: str, tmp_path: Path) -> None:
    lines = [(where, arguments) for where, (e, arguments) in PYTHON_LINES if e == entry]
    out = tmp_path / "results.json"
    argvs = json.dumps([[*arguments, "--help"] for _, arguments in lines])
    subprocess.run([sys.executable, "-c", HELP_DRIVER, entry, argvs, str(out)], cwd=ROOT, check=True, timeout=600)
    usage = USAGE.read_text(encoding="utf-8")
    for (where, arguments), result in zip(lines, json.loads(out.read_text(encoding="utf-8")), strict=True):
        line = shlex.join(["python", *([] if entry.endswith(".py") else ["-m"]), entry, *arguments])
        assert result["status"] == 0 and "usage:" in result["output"], f"{where}: {line}\n{result['output']}"
        options = documented_options(result["output"])
        unknown = flags(arguments) - options
        assert not unknown, f"{where}: {line} uses {sorted(unknown)}, which its --help does not list"
        missing = sorted(o for o in options if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", usage))
        assert not missing, f"docs/usage.md does not document {missing}, which `{line} --help` lists"


def test_documented_make_lines_are_targets() -> None:
    for where, words in ALL_LINES:
        if words[0] == "make":
            done = subprocess.run(["make", "-n", *words[1:]], cwd=ROOT, capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, f"{where}: {shlex.join(words)}\n{done.stderr}"


def test_documented_source_and_export_lines() -> None:
    code = "\n".join(p.read_text(encoding="utf-8") for p in [ROOT / "Makefile", *ROOT.glob("core/*.py")])
    for where, words in ALL_LINES:
        if words[0] == "source":
            assert (ROOT / words[1]).is_file(), f"{where}: {words[1]} does not exist"
        if words[0] == "export":
            name = words[1].split("=")[0]
            assert name in code, f"{where}: nothing in the suite reads {name}"


def write_reviews(folder: Path) -> Path:
    """The README's reviews.csv, grown to 60 rows of the same columns and labels."""
    (body,) = [body for info, body in fenced_blocks(README.read_text(encoding="utf-8")) if info == "csv"]
    header, *rows = list(csv.reader(body.splitlines()))
    assert header == ["review", "stars"]
    rows += [list(row) for row in separable_rows(60 - len(rows))]
    path = folder / "reviews.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([header, *rows])
    return path


@pytest.mark.slow
def test_the_readme_own_data_commands_run_on_tiny_data(tmp_path: Path) -> None:
    reviews = write_reviews(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for line in RUN_ON_TINY_DATA:
        words = shlex.split(line)
        done = subprocess.run(
            [sys.executable, *words[1:]], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900
        )
        assert done.returncode == 0, f"{line}\n{done.stderr[-3000:]}"
    assert json.loads((tmp_path / "runs/reviews/run.json").read_text())["side"] == "scratch"
    with (tmp_path / "labelled.csv").open(newline="", encoding="utf-8") as handle:
        labelled = list(csv.DictReader(handle))
    with reviews.open(newline="", encoding="utf-8") as handle:
        assert [row["review"] for row in labelled] == [row["review"] for row in csv.DictReader(handle)]
    assert {row["scratch_label"] for row in labelled} <= {"positive", "negative"}
    for row in labelled:
        assert float(row["scratch_p_positive"]) + float(row["scratch_p_negative"]) == pytest.approx(1, abs=1e-5)


def slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces to dashes."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a Markdown file (headings inside code blocks left out; repeats get -1, -2, ...)."""
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.M | re.S)
    found: set[str] = set()
    counts: dict[str, int] = defaultdict(int)
    for heading in re.findall(r"^#{1,6} (.+)$", text, re.M):
        base = slug(heading)
        found.add(f"{base}-{counts[base]}" if counts[base] else base)
        counts[base] += 1
    return found


@pytest.mark.parametrize("path", MARKDOWN, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve(path: Path) -> None:
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.M | re.S)
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        resolved = (path.parent / file).resolve() if file else path
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target}: no such heading")
    assert not broken, f"{path.relative_to(ROOT)}: " + "; ".join(broken)


def test_slug_is_githubs() -> None:
    assert slug("`make report TASK=pt_en` with the `small` preset's cool-down (2026-12-04)") == (
        "make-report-taskpt_en-with-the-small-presets-cool-down-2026-12-04"
    )
    assert slug("`python -m finetune export`, `python -m scratch export`") == (
        "python--m-finetune-export-python--m-scratch-export"
    )


def test_readme_is_a_short_guide_without_machine_figures() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_README_LINES
    assert "GFLOP" not in text, "machine speeds belong in docs/results.md"
    assert not re.search(r"\bUTC\b", text), "times of day belong in docs/results.md"
    for doc in ("docs/usage.md", "docs/results.md", "docs/development.md", "docs/formats.md"):
        assert f"]({doc}" in text, f"README.md does not link {doc}"
