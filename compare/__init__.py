"""Scores trained runs, compares them and writes reports, curves and benchmarks (`python -m compare`).

Sub-packages by what they produce: `run` (training both sides by starting their commands, then a report),
`report` (results.json, predictions.jsonl, report.md/.html), `curve` (curve.json), `bench` (bench.json),
`scoring` (the `evaluate` metric modules, statistics, calibration, baselines, error analysis, prediction
timing, shared by all of them) and `render` (number formatting, tables, Markdown, HTML, figures, which the
app uses too).

TensorFlow's start-up notices stay out of the terminal (and out of the processes compare starts, which
inherit the setting) unless the command line asks for `--verbose`.
"""

import os
import sys

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
if "--verbose" in sys.argv[1:]:
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "0"
else:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
