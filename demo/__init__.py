"""The Gradio demo behind `app.py`: where its report and runs come from (`sources`), what the runs take and give
(`task`), each kind's answers (`answers`), predicting (`prediction`), translating (`translation`), the report
tab's text (`report_view`), the Translate tab (`translate_tab`) and the page (`page`)."""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
