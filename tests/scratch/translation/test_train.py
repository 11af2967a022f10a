"""End to end on the toy task: the tiny preset learns it, the run directory holds what the contract says,
the saved model translates alone, and bad input stops before any run directory exists."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import sacrebleu
import tensorflow as tf

from core.mbr import consensus
from core.pairs import PairDataArguments, load_pairs
from core.training.log import HISTORY_FILE, read_history
from core.translator import load, read_translation_run
from scratch.__main__ import main
from scratch.translation import decoding
from scratch.translation.decoding import BeamSearch
from scratch.translation.tokenizer import EOS_ID, encode_source
from scratch.translation.train import load_trained
from tests.scratch.translation.conftest import tiny_command
from tests.scratch.translation.toy import WORDS, write_tsv

pytestmark = pytest.mark.slow  # the session's tiny translation run, a minute of training


def _test_split(run: Path):
    options = read_translation_run(run).data.options
    return load_pairs(PairDataArguments(**options)).splits["test"]


def test_the_tiny_preset_learns_the_toy_task_within_a_few_hundred_steps(tiny_translation_run):
    record = read_translation_run(tiny_translation_run)
    training = record.training
    best = training.history[training.best_epoch - 1]
    assert best["val_accuracy"] >= 0.95
    assert best["steps"] <= 400  # optimizer steps so far
    assert record.validation["chrf"] > 90


def _scalars(folder: Path) -> dict[str, dict[int, float]]:
    """Every scalar of the TensorBoard event files in `folder`: tag -> {step: value}."""
    found: dict[str, dict[int, float]] = {}
    for path in folder.glob("events.out.tfevents.*"):
        for event in tf.compat.v1.train.summary_iterator(str(path)):
            for value in event.summary.value:
                found.setdefault(value.tag, {})[event.step] = float(tf.make_ndarray(value.tensor))
    return found


def test_tensorboard_holds_every_epoch_as_the_classifiers_do(tiny_translation_run):
    history = read_translation_run(tiny_translation_run).training.history
    train, validation = (_scalars(tiny_translation_run / "logs" / name) for name in ("train", "validation"))
    assert {"epoch_loss", "epoch_accuracy"} <= set(train)
    assert {"epoch_loss", "epoch_accuracy", "epoch_chrf", "evaluation_loss_vs_iterations"} <= set(validation)
    for row in history:
        assert train["epoch_loss"][row["epoch"] - 1] == pytest.approx(row["loss"], rel=1e-6)
        assert validation["epoch_chrf"][row["epoch"] - 1] == pytest.approx(row["val_chrf"], rel=1e-6)
        assert validation["evaluation_loss_vs_iterations"][row["steps"]] == pytest.approx(row["val_loss"], rel=1e-6)


def test_the_model_card_gives_the_runs_scores_and_every_epoch(tiny_translation_run):
    record = read_translation_run(tiny_translation_run)
    card = (tiny_translation_run / "README.md").read_text(encoding="utf-8")
    validation = record.validation
    assert f"BLEU {validation['bleu']:.2f}, chrF++ {validation['chrf']:.2f}" in card
    assert "Sentence pairs, `pt` to `en`" in card and "from core.translator import load" in card
    for row in record.training.history:
        assert f"| {row['epoch']} | {row['loss']:.4f} | {row['val_loss']:.4f} |" in card
        assert f"| {row['val_chrf']:.2f} | {row['train_seconds']:.1f} |" in card
    for split, rows in record.data.splits.items():
        assert f"| {split} | {rows:,} | `{record.data.fingerprints[split]}` |" in card


def test_the_run_directory_follows_the_contract(tiny_translation_run):
    run = tiny_translation_run
    assert not run.with_name(run.name + ".partial").exists()
    assert {p.name for p in run.iterdir()} == {
        "run.json", "saved_model", "sentencepiece.model", "weights", "history.jsonl", "logs", "README.md"
    }  # fmt: skip
    record = read_translation_run(run)
    assert read_history(run / HISTORY_FILE) == record.training.history
    assert (record.side, record.task_kind, record.model.arch) == (
        "scratch",
        "translation",
        "encoder-decoder",
    )
    assert set(record.data.fingerprints) == {"train", "validation", "test"}
    assert record.data.splits == {"train": 1215, "validation": 150, "test": 135}
    for row in record.training.history:
        assert {"epoch", "loss", "val_loss", "val_accuracy", "val_chrf", "train_seconds"} <= set(row)
        assert row["train_seconds"] > 0
    assert record.training.stop_reason in ("early_stopping", "max_epochs")
    history = record.training.history
    chrf = [row["val_chrf"] for row in history]
    assert record.training.best_epoch == 1 + chrf.index(max(chrf))  # early stopping on chrF++ keeps the best
    if record.training.stop_reason == "early_stopping":
        assert len(history) - record.training.best_epoch == record.hyperparameters["patience"]
    assert record.training.averaged is None  # the tiny preset averages nothing: the kept weights are that epoch's
    assert record.hyperparameters["cooldown_steps"] == 0  # without --cooldown the schedule never cools down
    assert record.validation["chrf"] == pytest.approx(max(chrf), abs=1e-6)
    data = load_pairs(PairDataArguments(**record.data.options))
    train_sources = set(data.splits["train"].sources)
    assert record.data.leakage == {
        name: sum(source in train_sources for source in data.splits[name].sources) for name in ("validation", "test")
    }
    assert 0 <= record.validation["bleu"] <= 100 and 0 <= record.validation["chrf"] <= 100
    assert "nrefs:1|case:mixed|eff:no|tok:13a" in record.validation["signatures"]["bleu"]
    assert "nw:2" in record.validation["signatures"]["chrf"]


def test_the_saved_model_translates_in_a_fresh_process_as_the_run_does(tiny_translation_run, tmp_path):
    sources = _test_split(tiny_translation_run).sources
    script = textwrap.dedent(
        """
        import json, sys
        import tensorflow as tf
        import tensorflow_text  # noqa: F401
        module = tf.saved_model.load(sys.argv[1])
        texts = json.load(open(sys.argv[2]))
        print(json.dumps([t.decode() for t in module.translate(tf.constant(texts)).numpy()]))
        """
    )
    (tmp_path / "sources.json").write_text(json.dumps(sources))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TF_USE_LEGACY_KERAS")}
    done = subprocess.run(
        [sys.executable, "-c", script, str(tiny_translation_run / "saved_model"), str(tmp_path / "sources.json")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    fresh = json.loads(done.stdout.strip().splitlines()[-1])

    model, tokenizer, record = load_trained(tiny_translation_run)
    ids = decoding.decode(model, encode_source(tokenizer, tf.constant(sources), 32), 32).best
    eager = [t.decode() for t in tokenizer.detokenize(ids).numpy()]
    assert fresh == eager
    correct = sum(f == _toy_translation(s) for f, s in zip(fresh, sources))
    assert correct / len(sources) > 0.5


def test_cached_and_uncached_greedy_agree_on_the_trained_model(tiny_translation_run):
    model, tokenizer, _ = load_trained(tiny_translation_run)
    source = encode_source(tokenizer, tf.constant(_test_split(tiny_translation_run).sources[:40]), 32)
    cached = decoding.decode(model, source, 32).best.numpy()
    np.testing.assert_array_equal(cached, decoding.decode(decoding.Uncached(model), source, 32).best.numpy())
    ends = [list(row).index(EOS_ID) for row in cached if EOS_ID in row]
    assert len(ends) >= 35 and len(set(ends)) > 2  # most sentences ended, at different steps


def test_the_translator_gives_greedy_beam_and_attention(tiny_translation_run):
    translator = load(tiny_translation_run)
    sources = _test_split(tiny_translation_run).sources[:30]
    greedy = translator.translate(sources)
    assert translator.translate(sources, beam=1) == greedy
    assert translator.translate(sources[::-1]) == greedy[::-1]  # order kept whatever the batching
    beam = translator.translate(sources, beam=3)
    assert len(beam) == 30 and all(t.strip() for t in beam)
    assert np.mean([a == b for a, b in zip(beam, greedy)]) >= 0.7  # a well-trained toy model mostly agrees
    assert np.mean([t == _toy_translation(s) for t, s in zip(beam, sources)]) > 0.5
    source_tokens, target_tokens, weights = translator.attention(sources[0])
    assert source_tokens[-1] == "</s>" and target_tokens[-1] == "</s>"
    assert "".join(source_tokens[:-1]).replace("\u2581", " ").strip() == sources[0]
    shape = translator.record.model.config  # one map per layer and head
    assert weights.shape == (shape["num_layers"], shape["num_heads"], len(target_tokens), len(source_tokens))
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
    with pytest.raises(ValueError, match="beam must be at least 1"):
        translator.translate(sources, beam=0)


def _toy_translation(source: str) -> str:
    return " ".join(WORDS[w] for w in source.split())


def test_the_saved_model_beam_search_gives_the_python_side_hypotheses(tiny_translation_run):
    model, tokenizer, record = load_trained(tiny_translation_run)
    module = load(tiny_translation_run)._module
    sources = _test_split(tiny_translation_run).sources[:20]
    penalty = record.hyperparameters["length_penalty"]
    found = decoding.decode(model, encode_source(tokenizer, tf.constant(sources), 32), 32, BeamSearch(3, penalty))
    expected = tokenizer.detokenize(tf.reshape(found.ids, [60, -1])).numpy().reshape(20, 3)
    nbest = module.translate_nbest(tf.constant(sources), tf.constant(3))
    np.testing.assert_array_equal(nbest["translations"].numpy(), expected)
    np.testing.assert_allclose(nbest["scores"].numpy(), found.scores.numpy(), atol=1e-5)
    beam = module.translate_beam(tf.constant(sources), tf.constant(3)).numpy()
    np.testing.assert_array_equal(beam, expected[:, 0])


def test_minimum_bayes_risk_picks_each_sentences_consensus_among_the_beam(tiny_translation_run):
    translator = load(tiny_translation_run)
    sources = _test_split(tiny_translation_run).sources[:20]
    nbest = translator._module.translate_nbest(tf.constant(sources), tf.constant(3))
    candidates = [[t.decode() for t in row] for row in nbest["translations"].numpy()]
    chosen = translator.translate(sources, beam=3, mbr=True, batch_size=7)  # batches do not change the choice
    assert chosen == [row[consensus(row)] for row in candidates]
    assert all(t.strip() for t in chosen)
    # the consensus is a good translation (exact matches vary with thread scheduling; chrF++ does not, much)
    references = [_toy_translation(s) for s in sources]
    assert sacrebleu.corpus_chrf(chosen, [references], word_order=2).score > 80
    with pytest.raises(ValueError, match="--mbr chooses among a beam search's hypotheses: give a beam of 2 or more"):
        translator.translate(sources, beam=1, mbr=True)


def _refused(argv: list[str], output: Path, capsys, message: str, exists: bool = False):
    """`python -m scratch` ends in one `error:` line holding `message` and exit status 2, leaving no run."""
    with pytest.raises(SystemExit) as raised:
        main(argv)
    err = capsys.readouterr().err
    assert raised.value.code == 2 and err.startswith("error: ") and message in err and err.count("\n") == 1
    assert output.exists() == exists and not output.with_name(output.name + ".partial").exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--vocab-size", "3"], "smaller than the reserved ids"),
        (["--d-model", "30", "--num-heads", "4"], "--d-model 30 is not divisible by --num-heads 4"),
        (["--beam", "0"], "--beam must be at least 1"),
        (["--subword-alpha", "-0.5"], "--subword-alpha must be >= 0"),
        (["--cooldown", "1"], "--cooldown must be a fraction of the planned steps in [0, 1), got 1.0"),
    ],
)
def test_bad_options_are_refused_before_training(toy_file, tmp_path, capsys, extra, message):
    _refused(tiny_command(toy_file, tmp_path / "run", *extra), tmp_path / "run", capsys, message)


def test_bad_data_is_refused_before_training(tmp_path, capsys):
    empty = write_tsv(tmp_path / "empty.tsv", [("", "cat"), ("gato", "")])
    _refused(tiny_command(empty, tmp_path / "run"), tmp_path / "run", capsys, "has an empty 'pt' or 'en'")
    wrong = write_tsv(tmp_path / "wrong.tsv", [("gato", "cat")] * 20, header=("src", "tgt"))
    _refused(tiny_command(wrong, tmp_path / "run"), tmp_path / "run", capsys, "Its columns are: src, tgt")


def test_an_existing_output_directory_is_refused_before_the_vocabulary_is_trained(
    toy_file, tmp_path, capsys, monkeypatch
):
    import scratch.translation.train as train_module

    def untrainable(*args, **kwargs):
        raise AssertionError("the vocabulary was trained before the output directory was checked")

    monkeypatch.setattr(train_module, "train_sentencepiece", untrainable)
    (tmp_path / "run").mkdir()
    _refused(
        tiny_command(toy_file, tmp_path / "run"),
        tmp_path / "run",
        capsys,
        "already exists. Pass --overwrite",
        exists=True,
    )
    _refused(
        tiny_command(toy_file, tmp_path / "new", "--resume"), tmp_path / "new", capsys, "--resume: no unfinished run"
    )


def test_the_vocabulary_is_trained_on_the_train_split_alone(toy_file, tmp_path, monkeypatch):
    import scratch.translation.train as train_module

    class Stop(Exception):
        pass

    seen: list[str] = []

    def spy(texts, *args, **kwargs):
        seen.extend(texts)
        raise Stop  # the vocabulary is what this test is about: no need to train

    monkeypatch.setattr(train_module, "train_sentencepiece", spy)
    with pytest.raises(Stop):
        main(tiny_command(toy_file, tmp_path / "run"))
    options = PairDataArguments(train_file=str(toy_file), source_column="pt", target_column="en", seed=0, max_length=32)
    splits = load_pairs(options).splits
    assert seen == splits["train"].sources + splits["train"].targets
    held_out = set(splits["validation"].sources + splits["test"].sources) - set(splits["train"].sources)
    assert held_out and not held_out & set(seen)  # the carved validation and test sources never reach it
    assert not (tmp_path / "run").exists() and not (tmp_path / "run.partial").exists()
