from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from compare.predict import PredictArguments, predict_file
from core.data import DataError
from tests.compare.fakes import fake_run, tiny_data


class LengthClassifier:
    """Predicts from text length, so the expected output can be computed independently."""

    def __init__(self, run: dict, shift: int) -> None:
        self.side, self.name, self.run, self.labels, self.shift = (
            run["side"],
            run["side"],
            run,
            run["data"]["labels"],
            shift,
        )

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        scores = np.array([[(len(t) + self.shift + k) % 5 for k in range(len(self.labels))] for t in texts], float)
        return np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    data = tiny_data(tmp_path / "data")
    for side in ("finetune", "scratch"):
        fake_run(tmp_path / "runs" / side, side, data)
    return tmp_path / "runs"


def loader(path: Path, name=None) -> LengthClassifier:
    from core.rundir import read_run_json

    run = read_run_json(path)
    return LengthClassifier(run, 0 if run["side"] == "finetune" else 2)


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_every_run_labels_every_row(tmp_path: Path, runs: Path, suffix: str) -> None:
    texts = ["short", "a somewhat longer text", "x"]
    pd.DataFrame({"id": [1, 2, 3], "title": texts, "body": ["b", "", "cc"]}).to_csv(tmp_path / "in.csv", index=False)
    out = tmp_path / f"out{suffix}"
    predict_file(
        PredictArguments(
            runs=[str(runs)], input=str(tmp_path / "in.csv"), output=str(out), text_column=["title", "body"]
        ),
        loader=loader,
    )
    joined = ["short b", "a somewhat longer text", "x cc"]
    for side, shift in (("finetune", 0), ("scratch", 2)):
        expected = LengthClassifier({"side": side, "data": {"labels": ["neg", "neu", "pos"]}}, shift).predict_proba(
            joined
        )
        if suffix == ".csv":
            frame = pd.read_csv(out)
            assert list(frame["id"]) == [1, 2, 3]
            got = frame[[f"{side}_p_{label}" for label in ("neg", "neu", "pos")]].to_numpy()
            labels = list(frame[f"{side}_label"])
        else:
            rows = [json.loads(line) for line in out.read_text().splitlines()]
            assert [r["title"] for r in rows] == texts
            got = np.array([list(r["predictions"][side]["probs"].values()) for r in rows])
            labels = [r["predictions"][side]["label"] for r in rows]
        np.testing.assert_allclose(got, expected, atol=1e-6)
        assert labels == [["neg", "neu", "pos"][i] for i in expected.argmax(axis=1)]


def test_a_missing_text_column_is_named(tmp_path: Path, runs: Path) -> None:
    pd.DataFrame({"sentence": ["a"]}).to_csv(tmp_path / "in.csv", index=False)
    args = PredictArguments(runs=[str(runs)], input=str(tmp_path / "in.csv"), output=str(tmp_path / "o.csv"))
    with pytest.raises(DataError, match="has no column 'text'; its columns are sentence"):
        predict_file(args, loader=loader)
    assert not (tmp_path / "o.csv").exists()


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", r"in\.csv is empty; it needs a header row"),
        (b"text\n\xff\xfe bad bytes\n", r"in\.csv is not UTF-8 .* re-save it as UTF-8"),
        (None, r"Data file .*in\.csv does not exist"),
    ],
)
def test_an_unreadable_input_is_one_error_naming_the_file(tmp_path: Path, runs: Path, capsys, content, message):
    import re

    from compare.predict import main

    if content is not None:
        (tmp_path / "in.csv").write_bytes(content)
    argv = ["--runs", str(runs), "--input", str(tmp_path / "in.csv"), "--output", str(tmp_path / "o.csv")]
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.startswith("error: ") and err.count("\n") == 1
    assert re.search(message, err) and not (tmp_path / "o.csv").exists()
