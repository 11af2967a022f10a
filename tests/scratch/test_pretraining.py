"""Self-pretraining: BERT's masking, the masked-LM loss falling on a tiny model and on validation texts, its own
budget, a finite validation loss on short texts, resuming an interrupted pretraining from its backup, and the unlabelled file refused as bad input."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from core.training.log import read_history
from scratch import masked_lm
from scratch.__main__ import main
from scratch.args import ScratchArguments
from scratch.config import config_from_preset
from scratch.masked_lm import MaskedLanguageModelHead, mask_id, mask_tokens, masked_accuracy, masked_lm_loss
from scratch.model import build_classifier
from scratch.pipeline import tokenize
from scratch.pretraining import PretrainingArguments, read_unlabeled
from scratch.tokenizer import WordTokenizer
from tests.conftest import separable_rows, write_csv
from tests.scratch.tiny import refuse, tiny_argv


def test_masking_picks_real_tokens_at_the_rate_and_hides_them_80_10_10() -> None:
    tf.random.set_seed(0)
    vocabulary, separator = 50, 2
    ids = np.random.default_rng(0).integers(3, vocabulary, size=(400, 60))
    ids[:, 30] = separator  # a pair's separator
    ids[:, 50:] = 0  # padding
    inputs, targets = (t.numpy() for t in mask_tokens(tf.constant(ids), 0.15, vocabulary, 1, separator, seed=1))
    picked = targets > 0
    assert not picked[:, 50:].any() and not picked[:, 30].any()  # never padding, never the separator
    assert picked.sum() / (400 * 49) == pytest.approx(0.15, abs=0.01)
    np.testing.assert_array_equal(targets[picked], ids[picked])  # a target is the hidden token itself
    np.testing.assert_array_equal(inputs[~picked], ids[~picked])  # nothing else changes
    hidden = inputs[picked]
    masked, kept = hidden == mask_id(vocabulary), hidden == ids[picked]
    assert masked.mean() == pytest.approx(0.8, abs=0.02)
    assert (~masked & ~kept).mean() == pytest.approx(0.1 * (1 - 1 / (vocabulary - 1)), abs=0.02)
    assert kept.mean() == pytest.approx(0.1, abs=0.02)  # (a random token equal to the original counts as kept)
    assert (hidden < vocabulary + 1).all() and (hidden != separator).all() and (hidden != 0).all()


def test_the_head_loss_and_accuracy_count_the_hidden_positions_only() -> None:
    hidden = np.random.default_rng(1).normal(size=(2, 3, 4)).astype(np.float32)
    targets = np.array([[0, 3, 0], [4, 0, 1]])
    head = MaskedLanguageModelHead(5)
    logits = head(tf.constant(hidden), tf.constant(targets)).numpy()  # (3, 5): the picked positions, row-major
    everywhere = head(tf.constant(hidden), tf.ones([2, 3], tf.int64)).numpy().reshape(2, 3, 5)
    asked = [(0, 1), (1, 0), (1, 2)]
    np.testing.assert_allclose(logits, [everywhere[b, t] for b, t in asked], rtol=1e-5)
    log_probs = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
    expected = -np.mean([log_probs[i, targets[b, t]] for i, (b, t) in enumerate(asked)])
    assert float(masked_lm_loss(tf.constant(targets), tf.constant(logits))) == pytest.approx(expected, rel=1e-5)
    right = np.mean([logits[i].argmax() == targets[b, t] for i, (b, t) in enumerate(asked)])
    assert float(masked_accuracy(tf.constant(targets), tf.constant(logits))) == pytest.approx(right)


@pytest.mark.slow
def test_the_masked_lm_loss_falls_on_a_tiny_model(tmp_path: Path) -> None:
    tf.keras.utils.set_random_seed(0)
    texts = [text for text, _ in separable_rows(200)]
    tokenizer = WordTokenizer.adapt(texts, 200, 16)
    config = config_from_preset("tiny", num_labels=2)
    classifier = build_classifier(config, len(tokenizer.vocabulary) + 1)
    args = ScratchArguments(preset="tiny", batch_size=16, learning_rate=3e-3, warmup_steps=5)
    options = PretrainingArguments(self_pretrain=True, pretrain_steps=60, pretrain_log_steps=10)
    before = [w.copy() for w in classifier.get_layer("encoder_0").get_weights()]
    ids = tokenize(tokenizer, texts)
    record = masked_lm.pretrain(classifier, config, tokenizer, ids[:160], ids[160:], tmp_path, args, options, 0)
    history = record["history"]
    losses, validation = [row["loss"] for row in history], [row["val_loss"] for row in history]
    assert [row["steps"] for row in history] == [10, 20, 30, 40, 50, 60] and record["steps"] == 60
    assert losses[-1] < 0.85 * losses[0]  # the fixture's few words are soon guessed
    assert validation[-1] < 0.9 * validation[0]  # on texts it never trained on too
    assert history[-1]["val_masked_accuracy"] > history[0]["val_masked_accuracy"] + 0.1
    assert "val_loss_drop_se" not in history[0] and all(row["val_loss_drop_se"] > 0 for row in history[1:])
    assert record["stop_reason"] == "budget" and record["validation_texts"] == 40
    after = classifier.get_layer("encoder_0").get_weights()  # the classifier's own encoder learnt it
    assert any(not np.allclose(a, b) for a, b in zip(before, after))


def test_pretraining_has_a_budget_of_its_own_in_passes_steps_and_minutes() -> None:
    assert PretrainingArguments(self_pretrain=True, pretrain_epochs=2).planned_steps(40) == 80
    assert PretrainingArguments(self_pretrain=True, pretrain_epochs=0.5).planned_steps(41) == 21
    assert PretrainingArguments(self_pretrain=True, pretrain_epochs=2, pretrain_steps=30).planned_steps(40) == 30
    with pytest.raises(ValueError, match="--unlabeled-file, --pretrain-steps only apply with --self-pretrain"):
        PretrainingArguments(unlabeled_file="x.txt", pretrain_steps=3)
    with pytest.raises(ValueError, match="--mask-rate must be in"):
        PretrainingArguments(self_pretrain=True, mask_rate=1.5)
    with pytest.raises(ValueError, match="--pretrain-epochs must be above 0"):
        PretrainingArguments(self_pretrain=True, pretrain_epochs=0)
    with pytest.raises(ValueError, match="--pretrain-time-budget must be a number of minutes above 0, got -1"):
        PretrainingArguments(self_pretrain=True, pretrain_time_budget=-1)


def test_the_masked_lm_validation_loss_is_finite_on_short_texts() -> None:
    tf.keras.utils.set_random_seed(0)
    texts = ["good", "bad", "fine film", "ok", "dull", "yes"] * 5  # one or two pieces: most draws pick none
    tokenizer = WordTokenizer.adapt(texts, 50, 8)
    ids = tokenize(tokenizer, texts)
    masked = masked_lm.validation_masks(ids, 0.15, len(tokenizer.vocabulary), tokenizer.separator_id, seed=0)
    assert all((targets > 0).sum() >= 1 for _, targets in masked)  # every text asks at least one piece
    again = masked_lm.validation_masks(ids, 0.15, len(tokenizer.vocabulary), tokenizer.separator_id, seed=0)
    assert all(np.array_equal(a[0], b[0]) for a, b in zip(masked, again))  # every validation asks the same
    config = config_from_preset("tiny", num_labels=2)
    model = masked_lm.build_masked_lm(
        build_classifier(config, len(tokenizer.vocabulary) + 1), config, len(tokenizer.vocabulary)
    )
    validation = masked_lm.MaskedValidation(masked, batch_size=4)
    validation.set_model(model)
    logs: dict = {}
    validation.on_epoch_end(0, logs)
    assert np.isfinite(logs["val_loss"]) and logs["val_loss"] > 0 and 0 <= logs["val_masked_accuracy"] <= 1
    losses, _ = validation.losses()
    assert len(losses) == sum(int((targets > 0).sum()) for _, targets in masked)
    assert logs["val_loss"] == pytest.approx(float(losses.mean()))


class InterruptAt(tf.keras.callbacks.Callback):
    """Ctrl-C after `step` optimizer steps."""

    def __init__(self, step: int) -> None:
        super().__init__()
        self.step = step

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        if int(self.model.optimizer.iterations.numpy()) >= self.step:
            raise KeyboardInterrupt


PRETRAINING = {"self_pretrain": True, "pretrain_steps": 40, "pretrain_log_steps": 10, "max_steps": 60, "no_onnx": True}


@pytest.mark.slow
def test_an_interrupted_pretraining_resumes_from_its_backup(tmp_path: Path, monkeypatch) -> None:
    train_file = write_csv(tmp_path / "train.csv", separable_rows(120))
    unlabeled = tmp_path / "more.txt"
    unlabeled.write_text("\n".join(text for text, _ in separable_rows(300)), encoding="utf-8")
    out = tmp_path / "run"
    argv = tiny_argv(out, train_file, **PRETRAINING, unlabeled_file=unlabeled, max_length=16)
    pretrain = masked_lm.pretrain
    monkeypatch.setattr(masked_lm, "pretrain", functools.partial(pretrain, callbacks=[InterruptAt(25)]))
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 130
    partial = out.with_name("run.partial")
    assert [row["steps"] for row in read_history(partial / masked_lm.HISTORY_FILE)] == [10, 20]

    monkeypatch.setattr(masked_lm, "pretrain", pretrain)
    assert main([*argv, "--resume"]) == 0
    lines = (out / masked_lm.HISTORY_FILE).read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["steps"] for line in lines] == [10, 20, 30, 40]  # the backup's steps once, then on
    record = json.loads((out / "run.json").read_text(encoding="utf-8"))
    pretraining = record["pretraining"]
    assert [row["epoch"] for row in pretraining["history"]] == [1, 2, 3, 4] and pretraining["steps"] == 40
    assert pretraining["unlabeled_file"] == str(unlabeled) and pretraining["unlabeled_rows"] == 300
    assert pretraining["texts"] == record["data"]["splits"]["train"] + 300
    assert record["hyperparameters"]["max_steps"] == 60  # fine-tuning has the run's whole budget, not what is left
    assert pretraining["passes"] > 0 and pretraining["stop_reason"] == "budget"
    assert not (out / masked_lm.BACKUP_DIR).exists()


def bad_unlabeled_files(tmp: Path) -> dict[str, tuple[Path, str]]:
    (tmp / "empty.txt").write_text("\n \n", encoding="utf-8")
    write_csv(tmp / "reviews.csv", separable_rows(10))
    frame = (tmp / "reviews.csv").read_text(encoding="utf-8").replace("text,label", "review,label", 1)
    (tmp / "reviews.csv").write_text(frame, encoding="utf-8")
    return {
        "missing": (tmp / "nope.txt", r"^error: --unlabeled-file \S*nope\.txt does not exist\. Give a \.txt"),
        "empty": (tmp / "empty.txt", r"^error: --unlabeled-file \S*empty\.txt holds no text; give a file"),
        "no text column": (
            tmp / "reviews.csv",
            r"^error: --unlabeled-file \S*reviews\.csv has no text column 'text'; its columns are review, label\. "
            r"Name the column",
        ),
    }


@pytest.mark.parametrize("case", ["missing", "empty", "no text column"])
def test_a_bad_unlabeled_file_is_refused_and_leaves_no_run(case: str, tmp_path: Path, capsys) -> None:
    path, message = bad_unlabeled_files(tmp_path)[case]
    train_file = write_csv(tmp_path / "train.csv", separable_rows(40))
    out = tmp_path / "run"
    line = refuse(tiny_argv(out, train_file, self_pretrain=True, unlabeled_file=path), capsys)
    assert line.startswith("error:") and len(line.splitlines()) == 1
    assert re.search(message, line), line
    assert not out.exists() and not out.with_name("run.partial").exists()


def test_an_unlabeled_table_gives_its_text_and_second_text_columns(tmp_path: Path) -> None:
    path = tmp_path / "more.jsonl"
    rows = [{"sentence1": "a cat sat", "sentence2": "a cat rested"}, {"sentence1": "dogs bark", "sentence2": " "}]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    assert read_unlabeled(path, ["sentence1", "sentence2"]) == ["a cat sat", "a cat rested", "dogs bark"]
