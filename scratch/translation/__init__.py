"""Portuguese-to-English (or any pair's) translation with a Transformer written from scratch in Keras."""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
