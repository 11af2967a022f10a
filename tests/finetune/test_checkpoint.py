from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

from core import kinds
from finetune.__main__ import main
from finetune.checkpoint import (
    CheckpointError,
    convert_safetensors,
    load_for_task,
    resolve_checkpoint,
    tf_checkpoint,
)
from tests.finetune.tiny import make_tiny_bert, pytorch_state_dict


@pytest.fixture(scope="module")
def tiny_pair(tmp_path_factory) -> tuple[Path, Path]:
    """The same random weights written as a TF checkpoint and as a PyTorch-only safetensors checkpoint."""
    root = tmp_path_factory.mktemp("checkpoints")
    return make_tiny_bert(root / "tf", seed=3), make_tiny_bert(root / "pt", pytorch_only=True, seed=3)


def _hidden_states(directory: Path) -> np.ndarray:
    from transformers import TFAutoModel

    model = TFAutoModel.from_pretrained(directory)
    ids = np.array([[2, 7, 9, 11, 3, 0]], dtype=np.int32)
    mask = np.array([[1, 1, 1, 1, 1, 0]], dtype=np.int32)
    return model(input_ids=ids, attention_mask=mask, training=False).last_hidden_state.numpy()


def test_pytorch_only_checkpoint_converts_to_the_same_model(tiny_pair, tmp_path, monkeypatch) -> None:
    tf_dir, pt_dir = tiny_pair
    monkeypatch.setenv("TEXTCLS_CACHE", str(tmp_path))
    checkpoint = resolve_checkpoint(str(pt_dir))
    assert checkpoint.weights == "safetensors"
    converted = tf_checkpoint(checkpoint)
    assert converted.parent == tmp_path / "tf-checkpoints"
    assert (converted / "tf_model.h5").is_file()
    np.testing.assert_allclose(_hidden_states(converted), _hidden_states(tf_dir), atol=1e-6)


def test_a_run_hashes_the_checkpoint_weights_once(tiny_pair, tmp_path, monkeypatch) -> None:
    """The conversion's cache key reads the whole weights file (about 90 MB for minilm); a run needs it once."""
    import finetune.checkpoint

    _, pt_dir = tiny_pair
    monkeypatch.setenv("TEXTCLS_CACHE", str(tmp_path))
    reads = []
    convert = finetune.checkpoint.convert_safetensors
    monkeypatch.setattr(finetune.checkpoint, "convert_safetensors", lambda *a: reads.append(a) or convert(*a))
    checkpoint = resolve_checkpoint(str(pt_dir))
    first = tf_checkpoint(checkpoint)  # what finetune.train does before loading the data
    load_for_task(checkpoint, ["a", "b"])  # what building the model does
    assert tf_checkpoint(checkpoint) == first and len(reads) == 1


def test_conversion_is_cached_and_leaves_no_staging(tiny_pair, tmp_path) -> None:
    _, pt_dir = tiny_pair
    first = convert_safetensors(pt_dir, tmp_path)
    stamp = (first / "tf_model.h5").stat().st_mtime_ns
    second = convert_safetensors(pt_dir, tmp_path)
    assert second == first and (second / "tf_model.h5").stat().st_mtime_ns == stamp
    assert [p.name for p in (tmp_path / "tf-checkpoints").iterdir()] == [first.name]


def test_conversion_refuses_when_encoder_weights_do_not_load(tiny_pair, tmp_path) -> None:
    _, pt_dir = tiny_pair
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_bytes((pt_dir / "config.json").read_bytes())
    state = load_file(pt_dir / "model.safetensors")
    save_file(
        {k.replace("encoder.layer.1.", "decoder.block.1."): v for k, v in state.items()}, broken / "model.safetensors"
    )
    with pytest.raises(CheckpointError, match=r"encoder weights did not load \(e\.g\. encoder\.layer\.1\."):
        convert_safetensors(broken, tmp_path / "cache")
    assert not (tmp_path / "cache" / "tf-checkpoints").exists() or not any(
        (tmp_path / "cache" / "tf-checkpoints").iterdir()
    )


def test_pytorch_names_round_trip(tiny_pair) -> None:
    from transformers import TFAutoModel

    tf_dir, pt_dir = tiny_pair
    derived = pytorch_state_dict(TFAutoModel.from_pretrained(tf_dir))
    written = load_file(pt_dir / "model.safetensors")
    assert derived.keys() == written.keys()
    for name, value in written.items():
        np.testing.assert_array_equal(derived[name], value)


@pytest.mark.slow
def test_checkpoint_trained_on_other_labels_gets_a_new_head(base_run, caplog) -> None:
    checkpoint = resolve_checkpoint(str(base_run))
    saved = load_for_task(checkpoint, ["negative", "positive"]).classifier.kernel.numpy()

    with caplog.at_level(logging.INFO, logger="finetune.checkpoint"):
        renamed = load_for_task(checkpoint, ["bad", "good"])
        three = load_for_task(checkpoint, ["a", "b", "c"])
        multi = load_for_task(checkpoint, ["negative", "positive"], kind=kinds.get("multi_label_classification"))
        regression = load_for_task(checkpoint, [], kind=kinds.get("regression"))
    assert "starting a new head for ['bad', 'good'] (single_label_classification)" in caplog.text
    assert "starting a new head for ['a', 'b', 'c'] (single_label_classification)" in caplog.text
    # the same label names of another kind of problem: a new head too
    assert "starting a new head for ['negative', 'positive'] (multi_label_classification)" in caplog.text
    assert "starting a new head for [] (regression)" in caplog.text
    assert not np.allclose(renamed.classifier.kernel.numpy(), saved)
    assert not np.allclose(multi.classifier.kernel.numpy(), saved)
    assert three.classifier.kernel.shape == (saved.shape[0], 3)
    assert three.config.id2label == {0: "a", 1: "b", 2: "c"}
    assert regression.classifier.kernel.shape == (saved.shape[0], 1)
    assert (regression.config.problem_type, regression.config.num_labels) == ("regression", 1)


def test_checkpoint_trained_on_the_same_labels_keeps_its_head(base_run, caplog) -> None:
    import h5py

    with caplog.at_level(logging.INFO, logger="finetune.checkpoint"):
        model = load_for_task(resolve_checkpoint(str(base_run)), ["negative", "positive"])
    assert "keeping its classification head" in caplog.text
    with h5py.File(base_run / "tf_model.h5") as weights:
        found = []
        weights.visititems(lambda name, item: found.append(item[()]) if name.endswith("classifier/kernel:0") else None)
    np.testing.assert_array_equal(model.classifier.kernel.numpy(), found[0])


def refused(capsys, argv: list[str]) -> str:
    """The one error line `python -m finetune argv` ends with (exit status 2)."""
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    return lines[0]


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ("no-such-owner/no-such-model-xyz", "Unknown model 'no-such-owner/no-such-model-xyz'"),
        ("./missing/folder", "--model ./missing/folder: no such directory"),
    ],
)
def test_unknown_model_is_refused_before_training(tmp_path, tiny_csv, model, message, capsys) -> None:
    assert message in refused(
        capsys, ["--train-file", str(tiny_csv), "--output-dir", str(tmp_path / "run"), "--model", model]
    )
    assert not (tmp_path / "run.partial").exists()


def test_directory_without_weights_is_refused(tmp_path, tiny_csv, tiny_pair, capsys) -> None:
    empty = tmp_path / "config-only"
    empty.mkdir()
    (empty / "config.json").write_bytes((tiny_pair[0] / "config.json").read_bytes())
    argv = ["--train-file", str(tiny_csv), "--output-dir", str(tmp_path / "run"), "--model"]
    assert "has no weights: expected tf_model.h5 or model.safetensors" in refused(capsys, [*argv, str(empty)])
    assert "is not a model checkpoint: it has no config.json" in refused(capsys, [*argv, str(tmp_path)])
    assert not (tmp_path / "run.partial").exists()


def test_max_length_beyond_the_model_positions_is_refused(tmp_path, tiny_csv, tiny_pair, capsys) -> None:
    flags = ["--model", str(tiny_pair[0]), "--max-length", "100"]
    message = refused(capsys, ["--train-file", str(tiny_csv), "--output-dir", str(tmp_path / "run"), *flags])
    assert "--max-length 100 exceeds the 64 positions" in message
    assert not (tmp_path / "run.partial").exists()


@pytest.mark.slow
def test_a_run_that_converts_the_checkpoint_trains_as_one_that_finds_it_cached(
    tiny_pair, tiny_csv, tmp_path, monkeypatch
) -> None:
    """Building the model to convert draws random numbers; the head's initialisation must not depend on it."""
    import json

    from tests.finetune.tiny import train_tiny_run

    _, pt_dir = tiny_pair
    monkeypatch.setenv("TEXTCLS_CACHE", str(tmp_path / "cache"))
    histories = []
    for name in ("converting", "cached"):
        run = train_tiny_run(tmp_path / name, tiny_csv, model=pt_dir, epochs=1, max_steps=5, no_onnx=True)
        lines = (run / "history.jsonl").read_text(encoding="utf-8").splitlines()
        histories.append([(row["loss"], row["val_loss"]) for row in map(json.loads, lines)])
    assert (tmp_path / "cache" / "tf-checkpoints").is_dir()
    assert histories[0] == histories[1]
