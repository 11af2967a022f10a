from __future__ import annotations

from pathlib import Path

import pytest

from compare.report.publish import ReportDirError, report_directory


def test_the_directory_appears_only_when_the_block_succeeds(tmp_path: Path) -> None:
    out = tmp_path / "report"
    with pytest.raises(RuntimeError), report_directory(out) as tmp:
        (tmp / "results.json").write_text("{}")
        raise RuntimeError("figure failed")
    assert not out.exists() and not (tmp_path / "report.partial").exists()
    with report_directory(out) as tmp:
        (tmp / "results.json").write_text("{}")
        assert not out.exists()
    assert (out / "results.json").read_text() == "{}"


def test_a_failed_report_leaves_the_previous_one_whole(tmp_path: Path) -> None:
    out = tmp_path / "report"
    with report_directory(out) as tmp:
        (tmp / "results.json").write_text("old")
        (tmp / "a.png").write_text("old")
    with pytest.raises(RuntimeError), report_directory(out) as tmp:
        (tmp / "results.json").write_text("new")
        raise RuntimeError
    assert (out / "results.json").read_text() == "old" and (out / "a.png").read_text() == "old"
    with report_directory(out) as tmp:
        (tmp / "results.json").write_text("new")
    assert (out / "results.json").read_text() == "new" and not (out / "a.png").exists()


def test_a_directory_of_other_files_is_refused(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "thesis.tex").write_text("x")
    with pytest.raises(ReportDirError, match=r"already holds files that are not a report \(thesis.tex\)"):
        with report_directory(tmp_path / "mine"):
            pass
    assert (tmp_path / "mine" / "thesis.tex").exists() and not (tmp_path / "mine.partial").exists()
