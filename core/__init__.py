"""Shared layer of the suite: tasks and data loading, the run-directory contract, the Classifier protocol.

Importing any package of the suite selects Keras 2 (``tf.keras``) before TensorFlow loads.
"""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
