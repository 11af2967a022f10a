from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.record import RunRecord, read_run, write_run
from core.rundir import (
    RunError,
    UnfinishedRun,
    check_run_dir,
    finish_run,
    partial_path,
    replace_dir,
    start_run,
)


def record(side: str = "scratch") -> dict:
    return {
        "side": side,
        "model": {"name": "m", "source": "s", "params": 10, "trainable_params": 10},
        "data": {"options": {}, "labels": ["a", "b"], "splits": {"train": 3}, "fingerprints": {"train": "x"}},
        "hyperparameters": {},
        "training": {"seconds": 1.0, "epochs_run": 1, "best_epoch": 1, "history": [], "examples_per_second": 3.0},
        "validation": {"accuracy": 0.5, "macro_f1": 0.4},
    }


def test_a_run_appears_only_when_finished(tmp_path: Path) -> None:
    out = tmp_path / "run"
    partial = start_run(out)
    assert partial == partial_path(out) and partial.is_dir() and not out.exists()
    write_run(partial, record())
    finish_run(partial, out)
    assert not partial.exists()
    loaded = read_run(out)
    assert loaded.schema_version == 1 and loaded.environment["python"]


def test_existing_output_is_refused_unless_overwrite(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    with pytest.raises(RunError, match="already exists. Pass --overwrite"):
        start_run(out)
    (out / "old.txt").write_text("old")
    partial = start_run(out, overwrite=True)
    write_run(partial, record())
    finish_run(partial, out)
    assert not (out / "old.txt").exists() and (out / "run.json").is_file()


def test_replacing_a_directory_keeps_the_old_one_when_the_new_one_cannot_move_in(tmp_path, monkeypatch) -> None:
    target, new = tmp_path / "export", tmp_path / "export.partial"
    target.mkdir()
    (target / "a.txt").write_text("old")
    new.mkdir()
    (new / "a.txt").write_text("new")
    rename = Path.rename

    def failing_rename(self: Path, to: Path) -> Path:
        if self == new:
            raise OSError("disk gone")
        return rename(self, to)

    monkeypatch.setattr(Path, "rename", failing_rename)
    with pytest.raises(OSError, match="disk gone"):
        replace_dir(new, target)
    assert (target / "a.txt").read_text() == "old" and (new / "a.txt").read_text() == "new"
    monkeypatch.undo()
    replace_dir(new, target)
    assert (target / "a.txt").read_text() == "new" and sorted(p.name for p in tmp_path.iterdir()) == ["export"]


def test_resume_keeps_the_partial_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    partial = start_run(out)
    (partial / "checkpoint").write_text("epoch 1")
    assert (start_run(out, resume=True) / "checkpoint").read_text() == "epoch 1"
    assert not (start_run(out, overwrite=True) / "checkpoint").exists()  # --overwrite starts again
    with pytest.raises(RunError, match="no unfinished run"):
        start_run(tmp_path / "other", resume=True)


def test_a_new_run_refuses_to_discard_an_unfinished_one(tmp_path: Path) -> None:
    out = tmp_path / "run"
    partial = start_run(out)
    with pytest.raises(UnfinishedRun) as refused:
        start_run(out)
    assert str(refused.value) == (
        f"{partial} holds an unfinished run (no epoch finished yet); resume it with --resume, or pass --overwrite "
        "to start again."
    )
    # epoch 2 redone after an interruption, epoch 3 logged but interrupted before its backup was written
    rows = [
        {"epoch": 1, "steps": 50},
        {"epoch": 2, "steps": 100},
        {"epoch": 2, "steps": 100},
        {"epoch": 3, "steps": 150},
    ]
    (partial / "history.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    back_up_epochs(partial, 2)
    with pytest.raises(UnfinishedRun) as refused:
        check_run_dir(out)
    assert refused.value.message("python -m scratch --output-dir run --resume") == (
        f"{partial} holds an unfinished run (2 epochs finished, 100 steps); resume it with: python -m scratch "
        "--output-dir run --resume, or pass --overwrite to start again."
    )
    assert (partial / "history.jsonl").is_file()


def back_up_epochs(run_dir: Path, epochs: int) -> None:
    """Writes the backup Keras' `BackupAndRestore` leaves after `epochs` epochs into the unfinished `run_dir`."""
    import numpy as np
    import tensorflow as tf

    from core.training.loop import BACKUP_DIR

    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    backup = tf.keras.callbacks.BackupAndRestore(str(run_dir / BACKUP_DIR), delete_checkpoint=False)
    model.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=epochs, verbose=0, callbacks=[backup])


def test_resume_refuses_other_data_or_another_model(tmp_path: Path) -> None:
    out = tmp_path / "run"
    keep = {"data": {"train": "ab12", "test": "cd34"}, "model": {"d_model": 64, "layers": (2, 2)}}
    partial = start_run(out, keep=keep)
    (partial / "checkpoint").write_text("epoch 1")
    assert start_run(out, resume=True, keep=keep) == partial  # the same data and model continue
    other = {"data": {"train": "ff00", "test": "cd34"}, "model": {"d_model": 32, "layers": (2, 2)}}
    with pytest.raises(RunError) as refused:
        start_run(out, resume=True, keep=other)
    assert str(refused.value) == (
        f"--resume: {partial} was started with other data or another model (data.train 'ab12' then, 'ff00' now; "
        "model.d_model 64 then, 32 now). Rerun with the options it was started with, or start again with --overwrite."
    )
    assert (partial / "checkpoint").read_text() == "epoch 1"
    assert not (start_run(out, overwrite=True, keep=other) / "checkpoint").exists()  # --overwrite starts again


def test_unfinished_run_cannot_be_finished_or_loaded(tmp_path: Path) -> None:
    out = tmp_path / "run"
    partial = start_run(out)
    with pytest.raises(RunError, match="has no run.json"):
        finish_run(partial, out)
    with pytest.raises(RunError, match=r"does not exist. An unfinished run is in .*run.partial.*--resume"):
        read_run(out)


def test_incomplete_run_json_names_what_is_missing(tmp_path: Path) -> None:
    broken = record()
    del broken["training"]["history"]
    (tmp_path / "run.json").write_text(json.dumps({"schema_version": 1, "environment": {}, **broken}))
    with pytest.raises(RunError, match="lacks training.history"):
        read_run(tmp_path)
    (tmp_path / "run.json").write_text("{not json")
    with pytest.raises(RunError, match="not valid JSON"):
        read_run(tmp_path)


def test_a_classification_run_read_as_a_translation_run_is_named_as_such(tmp_path: Path) -> None:
    from core.translator import read_translation_run

    (tmp_path / "run.json").write_text(json.dumps({"schema_version": 1, "side": "scratch", "data": {}}))
    with pytest.raises(RunError) as refused:
        read_translation_run(tmp_path)
    assert str(refused.value) == (
        f"{tmp_path / 'run.json'} is a classification run of the scratch side, not a translation run; give a "
        "translation run."
    )


def test_a_finished_run_keeps_no_resume_file(tmp_path: Path) -> None:
    out = tmp_path / "run"
    partial = start_run(out, keep={"data": {"train": "ab12"}})
    assert (partial / "resume.json").is_file()
    write_run(partial, record())
    finish_run(partial, out)
    assert not (out / "resume.json").exists() and (out / "run.json").is_file()


def test_a_distilled_run_written_before_distillation_seconds_keeps_its_teacher_time(tmp_path: Path) -> None:
    from compare.scoring.costs import run_costs

    def distilled(distillation: dict) -> RunRecord:
        return RunRecord.from_json(
            {**record(), "schema_version": 1, "environment": {}, "distillation": distillation}, path=tmp_path
        )

    assert run_costs(distilled({"labelling_seconds": 421.7}), tmp_path)["teacher_seconds"] == 421.7
    assert run_costs(distilled({"seconds": 12.5}), tmp_path)["teacher_seconds"] == 12.5
