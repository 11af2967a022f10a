"""Fine-tunes a pretrained BERT with TFAutoModelForSequenceClassification (`python -m finetune`)."""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
