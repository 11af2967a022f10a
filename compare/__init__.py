"""Scores trained runs, compares them and writes reports, curves and benchmarks (`python -m compare`)."""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
