"""Stand-ins and fixtures for the demo's tests: fake classifiers, small report directories, and reports
written by compare itself over the tiny runs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from core import kinds
from core.kinds import Kind
from core.record import SCHEMA_VERSION, RunRecord, write_run
from core.translator import check_decoding

LABELS = ["negative", "positive"]
POSITIVE_WORDS = {"great", "wonderful", "loved", "superb", "joy"}
NEGATIVE_WORDS = {"dull", "boring", "hated", "terrible", "waste"}
EMOTIONS = ["anger", "joy", "neutral", "sadness"]  # a multi-label fake's labels, each raised by its words
EMOTION_WORDS = {"anger": {"furious", "angry"}, "joy": {"glad", "happy"}, "sadness": {"sad", "tears"}, "neutral": set()}
THRESHOLDS = {"finetune": [0.35, 0.5, 0.6, 0.45], "scratch": [0.3, 0.8, 0.5, 0.4]}  # each run's own, per label
PAIR_COLUMNS = ("sentence1", "sentence2")
VALUE_RANGE = [0.0, 5.0]


# Each kind's task and validation scores in the fakes' runs (test data, keyed by the name run.json stores).
TASK_OF = {
    "single_label_classification": "sst2",
    "multi_label_classification": "goemotions_ekman",
    "regression": "stsb",
}
VALIDATION = {
    "single_label_classification": {"accuracy": 0.85, "macro_f1": 0.8412},
    "multi_label_classification": {"macro_f1": 0.6125, "micro_f1": 0.6607},
    "regression": {"spearman": 0.8137, "pearson": 0.8021, "mse": 0.7144},
}


def run_record(
    side: str,
    labels: list[str] = LABELS,
    problem_type: str = kinds.DEFAULT,
    pairs: bool = False,
    thresholds: list[float] | None = None,
    value_range: list[float] | None = None,
) -> dict[str, Any]:
    """A run.json body as a trainer hands it to `core.record.write_run` (which adds the schema version, the
    environment and the time), of any kind; a pair task reads `PAIR_COLUMNS`."""
    options: dict[str, Any] = {"task": TASK_OF[problem_type], "max_length": 16}
    if pairs:
        options = {"train_file": "pairs.csv", "text_column": [PAIR_COLUMNS[0]], "text_pair_column": PAIR_COLUMNS[1]}
    data = {
        "options": options,
        "problem_type": problem_type,
        "headline_metric": kinds.get(problem_type).headline,
        "text_pair_column": PAIR_COLUMNS[1] if pairs else None,
        "labels": labels,
        "splits": {"train": 200, "validation": 20, "test": 30},
        "fingerprints": {"train": "x"},
    }
    if value_range is not None:
        data["value_range"] = value_range
    return {
        "side": side,
        "model": {"name": "tiny-" + side, "source": "test", "params": 12_345, "trainable_params": 12_345},
        "data": data,
        "thresholds": thresholds,
        "hyperparameters": {},
        "training": {"seconds": 12.5, "epochs_run": 3, "best_epoch": 2, "history": [], "examples_per_second": 40.0},
        "validation": {**VALIDATION[problem_type], "loss": 0.4},
    }


def record_of(body: dict[str, Any]) -> RunRecord:
    """The `RunRecord` of a run.json body (`run_record`), completed as `write_run` completes it."""
    return RunRecord.from_json({"schema_version": SCHEMA_VERSION, "environment": {}, **body})


def with_options(model: Any, options: dict[str, Any]) -> None:
    """Gives a fake's run other data options (what its data was loaded with)."""
    body = model.record.to_json()
    body["data"]["options"] = options
    model.record = RunRecord.from_json(body)


class FakeClassifier:
    """A bag-of-words stand-in with the Classifier interface: positive words push towards `positive`. A pair
    task's fake (`pairs=True`) reads both texts."""

    thresholds: list[float] | None = None
    attends = False
    attributes = True

    def __init__(self, side: str, labels: list[str] = LABELS, pairs: bool = False) -> None:
        self.side = self.name = side
        self.labels = list(labels)
        self.has_pairs = pairs
        self.record = record_of(run_record(side, self.labels, pairs=pairs))

    @property
    def kind(self) -> Kind:
        return self.record.kind

    def predict(self, texts: list[str], text_pairs: list[str] | None = None) -> np.ndarray:
        """The kind's decisions (`Kind.decide`) on this fake's outputs."""
        if self.kind.gives_values:
            return self.kind.decide(self.predict_values(texts, text_pairs), self.thresholds)
        return self.kind.decide(self.predict_proba(texts, text_pairs), self.thresholds)

    def words(self, texts: list[str], text_pairs: list[str] | None) -> list[list[str]]:
        """Each input's words (both texts' for a pair), refusing pairs as `core.classifier` says."""
        if self.has_pairs != (text_pairs is not None):
            raise ValueError(f"text_pairs must be given exactly for a pair task; has_pairs is {self.has_pairs}")
        pairs = text_pairs if text_pairs is not None else [""] * len(texts)
        return [f"{text} {pair}".lower().split() for text, pair in zip(texts, pairs, strict=True)]

    def attribute(self, texts: list[str], text_pairs: list[str] | None = None, target=None, steps: int = 32):
        """Each word's push towards the answer: +1 for a positive word, -1 for a negative one, the other way round
        when the answer is the first label; a text saying "crash" fails, as a model can."""
        from core.attribution import Attribution

        if any("crash" in text for text in texts):
            raise RuntimeError("the fake cannot attribute this text")
        answers = self.predict_proba(texts, text_pairs).argmax(axis=1)
        explained = []
        for words, answer in zip(self.words(texts, text_pairs), answers, strict=True):
            sign = 1.0 if answer == len(self.labels) - 1 else -1.0
            scores = [sign * ((w in POSITIVE_WORDS) - (w in NEGATIVE_WORDS)) for w in words]
            explained.append(Attribution(words, scores, 0.0, self.labels[answer], 0.0, 0.0))
        return explained

    def predict_proba(self, texts: list[str], text_pairs: list[str] | None = None) -> np.ndarray:
        words = self.words(texts, text_pairs)
        score = np.array([sum((w in POSITIVE_WORDS) - (w in NEGATIVE_WORDS) for w in ws) for ws in words], float)
        logits = np.zeros((len(texts), len(self.labels)))
        logits[:, -1] = score + (0.3 if self.side == "scratch" else 0.0)
        exp = np.exp(logits - logits.max(axis=1, keepdims=True))
        return exp / exp.sum(axis=1, keepdims=True)


class FakeMultiLabel(FakeClassifier):
    """Multi-label: each of `EMOTIONS` has an independent probability, raised by its words; its run's thresholds
    are `THRESHOLDS[side]`."""

    def __init__(self, side: str, pairs: bool = False) -> None:
        super().__init__(side, EMOTIONS, pairs)
        self.thresholds = THRESHOLDS[side]
        self.record = record_of(run_record(side, EMOTIONS, "multi_label_classification", pairs, self.thresholds))

    def predict_proba(self, texts: list[str], text_pairs: list[str] | None = None) -> np.ndarray:
        words = self.words(texts, text_pairs)
        counts = np.array([[sum(w in EMOTION_WORDS[label] for w in ws) for label in self.labels] for ws in words])
        counts = counts.reshape(len(texts), len(self.labels)).astype(float)
        counts[:, self.labels.index("neutral")] = 1.0 - np.minimum(counts.sum(axis=1), 1.0)
        logits = 2.5 * counts - 1.5 + (0.2 if self.side == "scratch" else 0.0)
        return 1.0 / (1.0 + np.exp(-logits))  # (n, L), independent


class FakeRegression(FakeClassifier):
    """Regression on pairs (by default): 5 times the share of words the two texts have in common (the scratch side
    0.25 higher), as STS-B scores similarity from 0 to 5; `value_range` is recorded as the train range."""

    def __init__(self, side: str, pairs: bool = True, value_range: list[float] | None = VALUE_RANGE) -> None:
        super().__init__(side, [], pairs)
        self.record = record_of(run_record(side, [], "regression", pairs, value_range=value_range))

    def predict_proba(self, texts: list[str], text_pairs: list[str] | None = None) -> np.ndarray:
        raise TypeError("a regression model gives values: predict_values")

    def predict_values(self, texts: list[str], text_pairs: list[str] | None = None) -> np.ndarray:
        self.words(texts, text_pairs)
        pairs = text_pairs if text_pairs is not None else texts
        shared = [
            len(set(a.lower().split()) & set(b.lower().split()))
            / max(len(set(a.lower().split()) | set(b.lower().split())), 1)
            for a, b in zip(texts, pairs)
        ]
        return (5.0 * np.array(shared) + (0.25 if self.side == "scratch" else 0.0)).astype(np.float32)


class Attends:
    """Adds `explain` to a fake: its words (a pair's as `text [SEP] text_pair`) padded to 8 with `[PAD]`, attention
    rows that sum to 1."""

    layers, heads = 2, 3
    attends = True

    def explain(self, text: str, text_pair: str | None = None) -> tuple[list[str], np.ndarray]:
        if self.has_pairs != (text_pair is not None):
            raise ValueError(f"text_pair must be given exactly for a pair task; has_pairs is {self.has_pairs}")
        words = text.lower().split() + ([] if text_pair is None else ["[SEP]", *text_pair.lower().split()])
        tokens = (words[:8] + ["[PAD]"] * 8)[:8]
        rng = np.random.default_rng(len(text))
        weights = rng.random((self.layers, self.heads, 8, 8))
        return tokens, weights / weights.sum(axis=-1, keepdims=True)


class FakeScratch(Attends, FakeClassifier):
    """A single-label fake that explains itself; `name` tells a distilled student (also `side: scratch`) apart, and
    it may have other `layers` and `heads`."""

    def __init__(self, name: str = "scratch", layers: int = 2, heads: int = 3) -> None:
        super().__init__("scratch")
        self.name, self.layers, self.heads = name, layers, heads


FAKES = {  # the fake of each kind, by the name run.json stores
    "single_label_classification": FakeClassifier,
    "multi_label_classification": FakeMultiLabel,
    "regression": FakeRegression,
}


def fake_models(problem_type: str, pairs: bool) -> dict[str, Any]:
    """A fine-tuned and a from-scratch fake of one kind, the from-scratch one explaining itself, as the app loads
    a report's two runs."""
    fake = FAKES[problem_type]
    scratch = type(f"Attending{fake.__name__}", (Attends, fake), {})
    return {"finetune": fake("finetune", pairs=pairs), "scratch": scratch("scratch", pairs=pairs)}


def compare_report(tiny_runs: dict[str, Path], output: Path) -> Path:
    """The report `python -m compare report` writes over the two tiny runs, into `output`."""
    from compare.report.command import main as report_main

    argv = ["--runs", str(tiny_runs["finetune"]), str(tiny_runs["scratch"]), "--output-dir", str(output)]
    assert report_main([*argv, "--latency-samples", "2", "--bootstrap-resamples", "200"]) == 0
    return output


def write_report(directory: Path, runs: dict[str, Path] | None = None) -> Path:
    """A small report directory for finding runs and examples (its results.json holds only `runs`; the report
    tab's numbers are tested on reports compare writes), with run.json files under runs/."""
    directory.mkdir(parents=True, exist_ok=True)
    if runs is None:
        runs = {}
        for side in ("finetune", "scratch"):
            (directory / "runs" / side).mkdir(parents=True)
            write_run(directory / "runs" / side, run_record(side))
            runs[side] = directory / "runs" / side
    results = {"schema_version": 1, "runs": {name: str(path) for name, path in runs.items()}}
    (directory / "results.json").write_text(json.dumps(results))
    rows = [
        ("a great film", "positive", "positive", "negative"),
        ("a dull mess", "negative", "negative", "negative"),
        ("x" * 400, "positive", "positive", "negative"),  # too long to offer as an example
        ("i hated it", "negative", "positive", "negative"),
        ("superb acting", "positive", "positive", "positive"),
        ("boring and far too long", "negative", "positive", "negative"),
    ]
    with (directory / "predictions.jsonl").open("w") as handle:
        for text, gold, ft, sc in rows:
            predictions = {"finetune": {"label": ft, "probs": {}}, "scratch": {"label": sc, "probs": {}}}
            handle.write(json.dumps({"text": text, "gold": gold, "predictions": predictions}) + "\n")
        handle.write("not json\n")
    (directory / "report.html").write_text("<html><body><h1>Report</h1></body></html>")
    from matplotlib.figure import Figure

    figure = Figure(figsize=(3, 2))
    figure.subplots().bar(["finetune", "scratch"], [0.873, 0.791])
    figure.savefig(directory / "accuracy_by_model.png")
    return directory


# --- translation ------------------------------------------------------------------------------------------

TOY_WORDS = {"gato": "cat", "sol": "sun", "casa": "house", "lua": "moon", "mar": "sea"}


def translation_record(arch: str = "encoder-decoder") -> dict[str, Any]:
    """A complete translation run.json (docs/formats.md, "Translation"), as `core.translator` checks it."""
    from core.rundir import environment

    return {
        "schema_version": SCHEMA_VERSION,
        "created": "2026-01-01T00:00:00+00:00",
        "task_kind": "translation",
        "side": "scratch",
        "model": {
            "name": f"scratch-{arch}",
            "source": "trained from scratch",
            "arch": arch,
            "params": 186_928,
            "trainable_params": 186_924,
        },
        "data": {
            "options": {"task": "pt_en", "max_length": 32},
            "columns": {"source": "pt", "target": "en", "domain": "source"},
            "labels": [],
            "splits": {"train": 17_000, "validation": 1_000, "test": 1_500},
            "fingerprints": {"train": "x"},
        },
        "hyperparameters": {"preset": "tiny", "arch": arch},
        "training": {
            "seconds": 95.0,
            "epochs_run": 12,
            "best_epoch": 11,
            "history": [],
            "examples_per_second": 300.0,
            "stop_reason": "max_epochs",
        },
        "validation": {"bleu": 21.345, "chrf": 44.56},
        "environment": environment(),
    }


class FakeTranslator:
    """A word-for-word stand-in with the Translator interface, remembering each call's texts, beam width and MBR."""

    layers, heads = 2, 3
    attends = True

    def __init__(self, name: str = "scratch", arch: str = "encoder-decoder") -> None:
        self.name, self.side = name, "scratch"
        self.record = RunRecord.from_json(translation_record(arch))
        self.calls: list[tuple[list[str], int, bool]] = []

    def translate(self, texts: list[str], beam: int = 1, batch_size: int = 64, mbr: bool = False) -> list[str]:
        if beam > 1 and self.record.model.arch != "encoder-decoder":
            raise ValueError(f"{self.name} is a decoder-only model; beam search needs encoder-decoder.")
        check_decoding(beam, mbr)
        self.calls.append((list(texts), beam, mbr))
        return [re.sub(r"\w+", lambda m: TOY_WORDS.get(m[0].lower(), m[0].lower()), " ".join(t.split())) for t in texts]

    def attention(self, text: str) -> tuple[list[str], list[str], np.ndarray]:
        source = ["▁" + w for w in text.split()] + ["</s>"]
        target = ["▁" + TOY_WORDS.get(w, w) for w in text.lower().split()] + ["</s>"]
        weights = np.random.default_rng(len(text)).random((self.layers, self.heads, len(target), len(source)))
        return source, target, weights / weights.sum(axis=-1, keepdims=True)


TRANSLATION_ROWS = [  # source, reference, domain, {system: translation}
    ("gato sol", "cat sun", "toy", {"scratch": "cat sun", "bergamot": "cat sun", "copy_source": "gato sol"}),
    ("casa lua", "house moon", "toy", {"scratch": "sea", "bergamot": "house moon", "copy_source": "casa lua"}),
    ("x" * 400, "y", "toy", {"scratch": "y", "bergamot": "z", "copy_source": "x" * 400}),  # too long to offer
    ("mar", "sea", None, {"scratch": "the sea", "bergamot": "sea", "copy_source": "mar"}),
    ("lua", "moon", "news", {"scratch": "moon", "bergamot": "moon", "copy_source": "lua"}),
]


def translation_results(runs: dict[str, str]) -> dict[str, Any]:
    """A translation results.json as docs/formats.md ("Translation reports") lays it out, every field filled."""

    def entry(bleu: float, chrf: float, **costs: Any) -> dict[str, Any]:
        per_domain = {
            "toy": {"n": 3, "bleu": bleu - 1.5, "chrf": chrf - 2.25},
            "news": {"n": 1, "bleu": bleu + 3.0, "chrf": chrf + 1.0},
        }
        return {
            "bleu": bleu,
            "bleu_ci": [bleu - 1.04, bleu + 1.26],
            "chrf": chrf,
            "chrf_ci": [chrf - 0.81, chrf + 0.77],
            "per_domain": per_domain,
            "per_length": {"1-5": {"n": 4, "bleu": bleu, "chrf": chrf}},
            "throughput_per_s": 57.0,
            "latency_p50_ms": 12.34,
            "latency_p95_ms": 20.5,
            **costs,
        }

    model = entry(21.37, 44.58, params=186_928, disk_bytes=2_000_000, train_seconds=95.0, epochs=3, train_rows=4)
    model.update(arch="encoder-decoder", beam=4, mbr=True, decoding="beam 4 + MBR", beam_throughput_per_s=14.2,
                 validation={"bleu": 20.0, "chrf": 43.0})  # fmt: skip
    model["diagnosis"] = []
    references = {
        "bergamot": {**entry(47.41, 68.42, disk_bytes=40_000_000), "description": "Bergamot pt-en", "note": "0.2.0"},
        "copy_source": {**entry(2.06, 23.95), "description": "the source copied unchanged", "note": None},
    }
    for reference in references.values():
        reference.update(params=None, train_seconds=None, epochs=None, train_rows=None)
    comparison = {
        "a": "scratch",
        "b": "bergamot",
        "bleu_diff": -26.04,
        "bleu_diff_ci": [-27.55, -24.49],
        "chrf_diff": -23.84,
        "chrf_diff_ci": [-25.01, -22.62],
        "bleu_p": 0.001,
        "chrf_p": 0.001,
        "winner": "bergamot",
        "verdict": "bergamot is ahead by 26.0 BLEU.",
    }
    settings = {"bootstrap_resamples": 1000, "bootstrap_seed": 0, "confidence": 0.95, "beam": 4,
                "mbr": True, "latency_samples": 5, "examples": 15, "decoding": "beam 4 + MBR"}  # fmt: skip
    return {
        "schema_version": 1,
        "task_kind": "translation",
        "split": "test",
        "n": 5,
        "runs": runs,
        "settings": settings,
        "data": {
            "source": "train.tsv",
            "columns": {"source": "pt", "target": "en", "domain": "domain"},
            "language_pair": "pt-en",
            "notes": [],
        },  # fmt: skip
        "models": {"scratch": model},
        "references": references,
        "comparisons": [comparison],
        "comparison": comparison,
        "largest_differences": [],
        "signatures": {
            "bleu": "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.5.1",
            "chrf": "nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:2.5.1",
        },
        "environment": {},
        "created": "2026-01-01T00:00:00+00:00",
    }


def write_translation_report(directory: Path, run: Path | None = None) -> Path:
    """A hand-built translation report directory: results.json, translations.jsonl and, without `run`, a
    run.json under runs/scratch (with `run`, the report names that run as `scratch`)."""
    directory.mkdir(parents=True, exist_ok=True)
    if run is None:
        run = directory / "runs" / "scratch"
        run.mkdir(parents=True)
        (run / "run.json").write_text(json.dumps(translation_record()))
    (directory / "results.json").write_text(json.dumps(translation_results({"scratch": str(run)})))
    with (directory / "translations.jsonl").open("w", encoding="utf-8") as handle:
        for source, reference, domain, translations in TRANSLATION_ROWS:
            row = {"source": source, "reference": reference, "domain": domain, "translations": translations}
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        handle.write("not json\n")
    return directory
