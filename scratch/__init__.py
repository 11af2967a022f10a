"""A Transformer encoder classifier written from scratch in Keras (`python -m scratch`)."""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
