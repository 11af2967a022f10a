"""The run record: one builder from a `RunContext`, one writer and one schema for every task kind."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from core.args import DataArguments, RunArguments
from core.data import load_task
from core.pairs import PairDataArguments, load_pairs
from core.record import RunContext, count_params, read_run, run_record, write_run
from core.rundir import RunError
from core.task_kinds import TRANSLATION
from core.training.budget import TrainingPlan
from core.translator import read_translation_run
from tests.conftest import separable_rows, write_csv
from tests.scratch.translation.toy import toy_pairs, write_tsv

TRAINING = {"seconds": 1.0, "epochs_run": 1, "best_epoch": 1, "history": [], "examples_per_second": 3.0}


def network() -> tf.keras.Model:
    model = tf.keras.Sequential(
        [tf.keras.Input((3,)), tf.keras.layers.Dense(4), tf.keras.layers.BatchNormalization(), tf.keras.layers.Dense(2)]
    )
    model.layers[0].trainable = False
    return model


def test_parameters_are_counted_over_every_weight_and_over_the_trainable_ones():
    model = network()
    # Dense 3 -> 4 (frozen): 12 + 4; batch norm: 4 x 4 (2 of them trainable); Dense 4 -> 2: 8 + 2
    assert count_params(model) == (16 + 16 + 10, 8 + 10)


def context(tmp_path: Path, data_args=None, **changes) -> RunContext:
    data_args = data_args or DataArguments(
        train_file=str(write_csv(tmp_path / "train.csv", separable_rows(60))), max_length=16
    )
    loaded = load_task(data_args) if isinstance(data_args, DataArguments) else load_pairs(data_args)
    fields = {
        "side": "scratch",
        "model": network(),
        "model_fields": {"name": "net", "source": "random"},
        "data": loaded.describe(data_args),
        "run_args": RunArguments(output_dir=str(tmp_path / "run"), strategy="default"),
        "options": {"epochs": None, "batch_size": 8, "max_steps": 30, "max_length": 16, "seed": 42},
        "plan": TrainingPlan(steps_per_epoch=7, epochs=5, total_steps=30),
        "replicas": 1,
        "training": TRAINING,
        "validation": {"accuracy": 0.5, "macro_f1": 0.4},
        "sections": {"serving": {"runtime": "tensorflow"}},
    }
    return RunContext(**{**fields, **changes})


def test_the_record_is_built_from_the_context_and_read_back_as_written(tmp_path):
    data_args = DataArguments(train_file=str(write_csv(tmp_path / "train.csv", separable_rows(60))), max_length=16)
    given = context(tmp_path, data_args)
    body = run_record(given)
    assert body["model"] == {"name": "net", "source": "random", "params": 42, "trainable_params": 18}
    assert body["hyperparameters"] == {
        "epochs": 5, "batch_size": 8, "max_steps": 30, "max_length": 16, "seed": 42, "strategy": "default",
        "replicas": 1, "steps_per_epoch": 7, "total_steps": 30,
    }  # fmt: skip
    assert body["data"] == load_task(data_args).describe(data_args)
    assert (body["side"], body["task_kind"], body["serving"]) == (
        "scratch",
        "classification",
        {"runtime": "tensorflow"},
    )
    written = write_run(tmp_path, body)
    assert read_run(tmp_path).to_json() == written.to_json() == json.loads((tmp_path / "run.json").read_text())
    assert written.schema_version == 1 and "sacrebleu" not in written.environment


def test_a_translation_record_is_checked_by_its_own_schema_and_records_its_packages(tmp_path):
    data_args = PairDataArguments(
        train_file=str(write_tsv(tmp_path / "pairs.tsv", toy_pairs(60))), source_column="pt", target_column="en"
    )
    given = context(
        tmp_path,
        data_args,
        task=TRANSLATION,
        model_fields={"name": "scratch-encoder-decoder", "source": "trained from scratch"},
        validation={"bleu": 10.0, "chrf": 30.0},
    )
    with pytest.raises(RunError, match="lacks model.arch"):
        write_run(tmp_path, run_record(given))
    assert not (tmp_path / "run.json").exists()  # nothing half-right is written
    given.model_fields["arch"] = "encoder-decoder"
    written = write_run(tmp_path, run_record(given))
    assert read_translation_run(tmp_path).to_json() == written.to_json()
    assert {"tensorflow-text", "sentencepiece", "sacrebleu"} <= set(written.environment)
    with pytest.raises(RunError, match="is a translation run of the scratch side, not a classification run"):
        read_run(tmp_path)


def test_a_classification_record_without_a_task_kind_still_reads(tmp_path):
    body = write_run(tmp_path, run_record(context(tmp_path))).to_json()
    del body["task_kind"]  # as written before every record named its kind
    (tmp_path / "run.json").write_text(json.dumps(body))
    assert read_run(tmp_path).validation == {"accuracy": 0.5, "macro_f1": 0.4}
    assert np.isclose(read_run(tmp_path, task=None).training.seconds, 1.0)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda body: body.pop("training"), "lacks training"),
        (lambda body: body["data"].pop("fingerprints"), "lacks data.fingerprints"),
        (lambda body: body["training"].update(seconds="ten"), 'training.seconds is "ten", not a float'),
        (lambda body: body["validation"].pop("macro_f1"), "lacks validation.macro_f1"),
        (lambda body: body.update(schema_version=7), "schema_version is 7; this suite reads version 1"),
        (lambda body: body["data"].update(problem_type="ordinal"), "data.problem_type: problem_type must be one of"),
        (lambda body: body["training"].update(stop_reason="bored"), "training.stop_reason is 'bored', not one of"),
    ],
)
def test_a_damaged_or_newer_run_json_is_one_error_line_naming_the_file_and_the_field(tmp_path, capsys, change, field):
    from compare.predict import main

    run = tmp_path / "run"
    run.mkdir()
    body = write_run(run, run_record(context(tmp_path))).to_json()
    change(body)
    (run / "run.json").write_text(json.dumps(body))
    (tmp_path / "in.csv").write_text("text\nfine\n")
    with pytest.raises(SystemExit) as exit_:
        main(["--runs", str(run), "--input", str(tmp_path / "in.csv"), "--output", str(tmp_path / "out.csv")])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.count("\n") == 1, err
    assert err.startswith(f"error: {run / 'run.json'}") and field in err
    assert not (tmp_path / "out.csv").exists()
