"""The page over fake models: a report from another version of compare still gives a page that says what to do."""

from __future__ import annotations

import json
from pathlib import Path

from demo import page, sources
from tests.demo.fakes import write_report


def test_a_report_missing_fields_is_explained_on_the_page(tmp_path: Path, fakes: dict) -> None:
    report = sources.load_report(write_report(tmp_path / "report"))  # its results.json holds only `runs`
    report.curve = {"points": []}  # and its curve.json no sizes
    text = json.dumps(page.build_demo(fakes, report).get_config_file(), default=str, ensure_ascii=False)
    assert "The report holds no comparison of two models." in text
    assert "The report's files lack 'models', which this version shows; recreate them with `make report`" in text
    assert "The report's files lack 'catch_up_size'" in text
    assert "| scratch | tiny-scratch | sst2 | 200 / 20 / 30 |" in text  # the runs are still described
