"""`--resume` continues an interrupted run where it stopped; the decoder-only variant trains and exports."""

from __future__ import annotations

import json

import pytest

import scratch.translation.train as train_module
from core.translator import load, read_translation_run
from tests.scratch.translation.conftest import tiny_command
from tests.scratch.translation.toy import toy_pairs, write_tsv


@pytest.fixture
def small_toy(tmp_path):
    return write_tsv(tmp_path / "train.tsv", toy_pairs(400, seed=5))


def test_resume_continues_after_the_last_finished_epoch(small_toy, tmp_path, monkeypatch):
    output = tmp_path / "run"
    flags = ["--early-stopping", "loss", "--patience", "5"]

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(train_module, "save", interrupted)
    with pytest.raises(KeyboardInterrupt):
        train_module.main(tiny_command(small_toy, output, "--epochs", "1", *flags))
    partial = output.with_name("run.partial")
    first = json.loads((partial / train_module.STATE_FILE).read_text())
    assert first["epoch"] == 1 and not output.exists()

    monkeypatch.undo()
    run = train_module.main(tiny_command(small_toy, output, "--epochs", "2", "--resume", *flags))
    history = read_translation_run(run)["training"]["history"]
    assert [row["epoch"] for row in history] == [1, 2]
    assert history[0] == first["history"][0]  # epoch 1 was not trained again
    assert read_translation_run(run)["training"]["steps"] == history[0]["steps"] + history[1]["steps"]
    assert not partial.exists()


def test_the_decoder_only_variant_trains_and_translates(small_toy, tmp_path):
    run = train_module.main(
        tiny_command(small_toy, tmp_path / "run", "--arch", "decoder-only", "--epochs", "2", "--early-stopping", "loss")
    )
    record = read_translation_run(run)
    assert record["model"]["arch"] == "decoder-only"
    assert record["training"]["early_stopping"] == "val_loss"
    assert "val_chrf" not in record["training"]["history"][0]
    translator = load(run)
    out = translator.translate(["gato sol", "rio mar casa"])
    assert len(out) == 2 and all(isinstance(t, str) for t in out)
    with pytest.raises(ValueError, match="beam search needs encoder-decoder"):
        translator.translate(["gato"], beam=2)
    with pytest.raises(ValueError, match="no cross-attention"):
        translator.attention("gato")
