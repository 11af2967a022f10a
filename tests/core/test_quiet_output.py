"""Without --verbose the commands print only the suite's own lines: none of TensorFlow's C++ logging, no Python
warning of a library, no traceback (core.console.quiet_tensorflow and setup_logging)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, separable_rows, write_csv

NOISE = [
    re.compile(r"^[IWEF]\d{4} "),  # TensorFlow's (absl's) C++ log lines: I0000 00:00:... devices.cc:67] ...
    re.compile(r"^\d{4}-\d\d-\d\d .*: [IWEF] tensorflow"),  # its older C++ log format
    re.compile(r"Warning|warnings\.warn"),  # a Python warning: UserWarning, FutureWarning, ...
    re.compile(r"Traceback"),
    re.compile(r"LOG\((INFO|WARNING)\)"),  # SentencePiece's C++ logging
    re.compile(r"absl::InitializeLog|are newly initialized|classes are deprecated"),  # absl, transformers
    re.compile(r"Quantization parameters for tensor|Ignore MatMul|pre-processing before quantization"),  # onnxruntime
    re.compile(r"XNNPACK delegate|cuda drivers|cpu_feature_guard|oneDNN custom operations"),  # TF Lite, TF start-up
]


def noise(output: str) -> list[str]:
    return [line for line in output.splitlines() if any(pattern.search(line) for pattern in NOISE)]


def test_the_noise_patterns_catch_what_the_libraries_print() -> None:
    printed = [
        "I0000 00:00:1796476183.366803    5055 devices.cc:67] Number of eligible GPUs: 0",
        "E0000 00:00:1796479428.536981   29526 util.cc:131] oneDNN supports DT_INT64 only on platforms with AVX-512.",
        "2024-01-01 10:00:00.000000: W tensorflow/core/framework/op_kernel.cc:1] something",
        "/x/y.py:3: UserWarning: tf.lite.Interpreter is deprecated",
        "normalizer.cc(51) LOG(INFO) precompiled_charsmap is empty. use identity normalization.",
        "Some layers of TFBertForSequenceClassification were not initialized ... and are newly initialized: ['x']",
    ]
    ours = "2026-12-05 14:02:56,299 WARNING core.data: 20 of 20 validation texts also occur in train."
    assert noise("\n".join([*printed, ours])) == printed


@pytest.mark.slow
def test_training_and_reporting_print_no_library_noise(tmp_path: Path) -> None:
    from tests.finetune.tiny import make_tiny_bert
    from tests.scratch.translation.toy import toy_pairs, write_tsv

    train = str(write_csv(tmp_path / "train.csv", separable_rows(200)))
    pairs = str(write_tsv(tmp_path / "pairs.tsv", toy_pairs(400)))
    run = {name: str(tmp_path / name) for name in ("finetune", "scratch", "translation", "report")}
    tiny = ["--epochs", "1", "--max-length", "16"]
    bert = str(make_tiny_bert(tmp_path / "bert"))
    commands = [
        [
            "finetune",
            "--train-file",
            train,
            "--model",
            bert,
            "--batch-size",
            "8",
            *tiny,
            "--output-dir",
            run["finetune"],
        ],
        ["scratch", "--train-file", train, "--preset", "tiny", *tiny, "--output-dir", run["scratch"]],
        ["scratch", "--train-file", pairs, "--source-column", "pt", "--target-column", "en", "--preset", "tiny", *tiny]
        + ["--output-dir", run["translation"]],
        ["compare", "report", "--runs", run["finetune"], run["scratch"], "--output-dir", run["report"]],
        ["scratch.translation.bench", "--run", run["translation"], "--split", "validation", "--beam", "1"]
        + ["--decodings", "greedy", "--repeats", "1", "--timing-batch", "2", "--output-tokens", "3"],
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TF_USE_LEGACY_KERAS": "1"}
    env.pop("TF_CPP_MIN_LOG_LEVEL", None)  # as a user's shell has it
    for argv in commands:
        done = subprocess.run(
            [sys.executable, "-m", *argv], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900
        )
        output = done.stdout + done.stderr
        assert done.returncode == 0, output[-3000:]
        assert noise(output) == [], f"python -m {' '.join(argv)}"

    # The serving export says what it does in a few lines of its own: no quantizer or TF Lite lines.
    argv = ["finetune", "export", run["finetune"], "--output-dir", str(tmp_path / "export")]
    done = subprocess.run([sys.executable, "-m", *argv], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    output = (done.stdout + done.stderr).strip().splitlines()
    assert done.returncode == 0 and noise("\n".join(output)) == [] and len(output) <= 5, output

    # The README's Python snippet prints nothing but what it asks for: the package imports TensorFlow quietly.
    snippet = (
        "from core.classifier import load; model = load({!r}); print(model.predict_proba(['a fine film']).shape); "
        "from core.translator import load as load_translator; print(load_translator({!r}).translate(['o gato'])[0] != '')"
    ).format(run["finetune"], run["translation"])
    done = subprocess.run([sys.executable, "-c", snippet], cwd=ROOT, env=env, capture_output=True, text=True)
    assert (done.returncode, done.stdout, done.stderr) == (0, "(1, 2)\nTrue\n", "")
