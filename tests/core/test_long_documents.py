"""Both sides reading long documents in windows (`--long-text chunks`, pooled by `core.classifier`): what a text's
head cannot tell, its pooled windows can; Integrated Gradients cover every word of the whole document."""

from __future__ import annotations

import numpy as np
import pytest

from core.classifier import load
from core.long_text import pool
from tests.long_documents import middle_documents, write_documents

pytestmark = pytest.mark.slow  # trains a model per side

OPTIONS = {"long_text": "chunks", "train_chunks": True, "stride": 4, "no_onnx": True, "max_length": 16, "seed": 0}


@pytest.fixture(scope="module", params=["scratch", "finetune"])
def chunks_run(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(f"long-documents-{request.param}")
    if request.param == "scratch":
        from tests.scratch.tiny import train_tiny_run

        budget = {"max_steps": 150}
    else:
        from tests.finetune.tiny import train_tiny_run

        budget = {"epochs": 4, "learning_rate": 1e-3}
    return load(train_tiny_run(folder / "run", write_documents(folder), **OPTIONS, **budget))


def test_a_document_whose_evidence_sits_in_the_middle_is_read_right_in_chunks_and_not_by_its_head(chunks_run):
    documents = middle_documents(40, seed=5)
    texts, gold = [text for text, _ in documents], np.array([chunks_run.labels.index(y) for _, y in documents])
    assert (chunks_run.predict(texts) == gold).mean() >= 0.8
    logits, windows = chunks_run.window_logits(texts)
    assert np.bincount(windows).min() > 1  # every document is longer than one window
    heads = np.array([logits[windows == i][0] for i in range(len(texts))])  # a text's first window is its head
    assert (heads.argmax(axis=1) == gold).mean() <= 0.7
    pooled = chunks_run.kind.activate(pool(logits, windows, "mean")).numpy()  # then calibrated as any output
    expected = chunks_run.kind.calibration.apply(pooled, chunks_run.temperatures)
    np.testing.assert_allclose(chunks_run.predict_proba(texts), expected, atol=1e-5)
    count, decided = chunks_run.windows_read(texts[0])
    assert count == np.bincount(windows)[0] and 0 <= decided < count


def test_integrated_gradients_cover_every_word_of_a_document_read_in_windows(chunks_run):
    text = middle_documents(2, seed=7)[0][0]
    [attribution] = chunks_run.attribute([text], steps=8)
    assert attribution.words == text.split()
    unscored = {i for i, score in enumerate(attribution.scores) if score == 0.0}
    # every word, head to tail, in some window (the words tokenizer gives no piece for a lone full stop)
    assert unscored <= (
        {i for i, word in enumerate(attribution.words) if word == "."} if chunks_run.side == "scratch" else set()
    )
    assert np.isfinite(attribution.gap)
