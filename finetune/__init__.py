"""Fine-tunes a pretrained BERT with TFAutoModelForSequenceClassification (`python -m finetune`)."""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
