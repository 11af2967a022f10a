from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from compare.predict import PredictArguments, predict_file
from core import kinds
from core.data import DataError
from core.record import RunRecord, read_run
from tests.compare.fakes import EMOTIONS, FakeClassifier, fake_run, multilabel_data, pair_regression_data, tiny_data


class LengthClassifier:
    """Predicts from text length, so the expected output can be computed independently."""

    def __init__(self, side: str, labels: list[str], shift: int) -> None:
        self.side, self.name, self.labels, self.shift = side, side, list(labels), shift
        self.kind, self.has_pairs, self.thresholds = kinds.get("single_label_classification"), False, None

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
    record = read_run(path)
    return LengthClassifier(record.side, record.labels, 0 if record.side == "finetune" else 2)


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
        expected = LengthClassifier(side, ["neg", "neu", "pos"], shift).predict_proba(joined)
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


class PairLengthRegressor(FakeClassifier):
    """Gives each pair a value from its two lengths, so the expected output can be computed independently."""

    def __init__(self, record: RunRecord) -> None:
        super().__init__(record.side, [], record, {})

    def answers(self, texts, text_pairs, want):
        self.check(texts, text_pairs, want)
        return [len(a) / 10 + len(b) / 100 for a, b in zip(texts, text_pairs)]


class LengthTagger(FakeClassifier):
    """Gives each label a probability from the text's length."""

    def __init__(self, record: RunRecord) -> None:
        super().__init__(record.side, record.labels, record, {})

    def answers(self, texts, text_pairs, want):
        self.check(texts, text_pairs, want)
        return [[((len(t) + 3 * k) % 10) / 10 for k in range(len(self.labels))] for t in texts]


def kind_loader(path: Path, name=None):
    record = read_run(path)
    return PairLengthRegressor(record) if record.kind.gives_values else LengthTagger(record)


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_pair_regression_and_multilabel_runs_write_their_own_columns(tmp_path: Path, suffix: str) -> None:
    fake_run(tmp_path / "stsb" / "finetune", "finetune", pair_regression_data(tmp_path / "pairs"))
    tags = fake_run(tmp_path / "tags" / "scratch", "scratch", multilabel_data(tmp_path / "multi"))
    thresholds = np.array(json.loads((tags / "run.json").read_text())["thresholds"])
    first, second = ["a cat", "the sun is out", "x"], ["a dog", "rain", "yy"]
    frame = pd.DataFrame({"id": [1, 2, 3], "s1": first, "s2": second})
    frame.to_csv(tmp_path / "in.csv", index=False)
    values = np.array([len(a) / 10 + len(b) / 100 for a, b in zip(first, second)])
    probs = np.array([[((len(t) + 3 * k) % 10) / 10 for k in range(3)] for t in first])
    chosen = [[label for label, p, t in zip(EMOTIONS, row, thresholds) if p >= t] for row in probs]
    outputs = {}
    for runs, pair in (("stsb", "s2"), ("tags", None)):
        out = tmp_path / f"{runs}{suffix}"
        args = PredictArguments(
            runs=[str(tmp_path / runs)], input=str(tmp_path / "in.csv"), output=str(out), text_column=["s1"]
        )
        args.text_pair_column = pair
        predict_file(args, loader=kind_loader)
        outputs[runs] = (
            pd.read_csv(out) if suffix == ".csv" else [json.loads(line) for line in out.read_text().splitlines()]
        )
    if suffix == ".csv":
        np.testing.assert_allclose(outputs["stsb"]["finetune_value"], values, atol=1e-6)
        assert list(outputs["stsb"].columns) == ["id", "s1", "s2", "finetune_value"]
        tagged = outputs["tags"]
        assert list(tagged["scratch_label"].fillna("")) == [";".join(labels) for labels in chosen]
        np.testing.assert_allclose(tagged[[f"scratch_p_{label}" for label in EMOTIONS]].to_numpy(), probs, atol=1e-6)
    else:
        assert [row["predictions"] for row in outputs["stsb"]] == [
            {"finetune": {"value": pytest.approx(v, abs=1e-6)}} for v in values
        ]
        assert [row["predictions"]["scratch"]["label"] for row in outputs["tags"]] == chosen
        assert [row["s2"] for row in outputs["tags"]] == second  # the input's columns are kept


@pytest.mark.parametrize(
    "pair, message",
    [
        (None, r"finetune was trained on pairs of texts \(the second from the column 'sentence2'\); pass "),
        ("nope", r"has no column 'nope'; its columns are s1, s2\. Choose with --text-pair-column"),
    ],
)
def test_a_pair_run_needs_the_column_of_second_texts(tmp_path: Path, capsys, pair, message) -> None:
    import re

    from compare.predict import main

    fake_run(tmp_path / "runs" / "finetune", "finetune", pair_regression_data(tmp_path / "pairs"))
    pd.DataFrame({"s1": ["a"], "s2": ["b"]}).to_csv(tmp_path / "in.csv", index=False)
    argv = ["--runs", str(tmp_path / "runs"), "--input", str(tmp_path / "in.csv"), "--output", str(tmp_path / "o.csv")]
    argv += ["--text-column", "s1", *(["--text-pair-column", pair] if pair else [])]
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.startswith("error: ") and err.count("\n") == 1
    assert re.search(message, err) and not (tmp_path / "o.csv").exists()


def test_a_single_text_run_refuses_a_column_of_second_texts(tmp_path: Path, runs: Path) -> None:
    from core.rundir import RunError

    pd.DataFrame({"text": ["a"], "other": ["b"]}).to_csv(tmp_path / "in.csv", index=False)
    args = PredictArguments(runs=[str(runs)], input=str(tmp_path / "in.csv"), output=str(tmp_path / "o.csv"))
    args.text_pair_column = "other"
    with pytest.raises(RunError, match="was trained on single texts, so it has no use for --text-pair-column 'other'"):
        predict_file(args, loader=loader)


def table_loader(path: Path, name=None) -> FakeClassifier:
    record = read_run(path)
    return FakeClassifier(record.side, record.labels, record, {})


def test_runs_of_different_kinds_are_refused(tmp_path: Path) -> None:
    from core.rundir import RunError

    single = fake_run(tmp_path / "a" / "finetune", "finetune", tiny_data(tmp_path / "data"))
    tags = fake_run(tmp_path / "b" / "scratch", "scratch", multilabel_data(tmp_path / "tags"))
    pd.DataFrame({"text": ["a"]}).to_csv(tmp_path / "in.csv", index=False)
    args = PredictArguments(
        runs=[str(single), str(tags)], input=str(tmp_path / "in.csv"), output=str(tmp_path / "o.csv")
    )
    with pytest.raises(RunError, match="is a single-label classification run but .* is a multi-label classification"):
        predict_file(args, loader=table_loader)
    assert not (tmp_path / "o.csv").exists()


def test_two_runs_of_one_side_are_named_by_their_directories_and_the_same_run_twice_is_refused(tmp_path: Path) -> None:
    from core.rundir import RunError

    data = tiny_data(tmp_path / "data")
    first, second = (fake_run(tmp_path / name, "finetune", data) for name in ("ft-a", "ft-b"))
    pd.DataFrame({"text": ["short", "longer text"]}).to_csv(tmp_path / "in.csv", index=False)
    out = tmp_path / "out.csv"
    args = PredictArguments(runs=[str(first), str(second)], input=str(tmp_path / "in.csv"), output=str(out))
    predict_file(args, loader=loader)
    assert [c for c in pd.read_csv(out).columns if c.endswith("_label")] == ["ft-a_label", "ft-b_label"]
    args = PredictArguments(
        runs=[str(first), str(first)], input=str(tmp_path / "in.csv"), output=str(tmp_path / "o.csv")
    )
    with pytest.raises(RunError, match="would both be called 'ft-a'"):
        predict_file(args, loader=loader)
    assert not (tmp_path / "o.csv").exists()
