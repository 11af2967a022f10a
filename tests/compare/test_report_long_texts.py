"""results.json `data.long_texts`: what each model cut of long texts, per split, and the report's note on it."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from compare.report.long_texts import long_text_entry, long_text_notes
from core.long_text import CHUNKS, HEAD, Reading


def counting_model(reading: Reading, window: int = 10, pairs: bool = False) -> SimpleNamespace:
    """A model whose pieces are a text's words."""
    return SimpleNamespace(
        has_pairs=pairs,
        reading=reading,
        window=window,
        piece_counts=lambda texts: np.array([len(text.split()) for text in texts], np.int64),
    )


TEXTS = {"train": ["a b", "a " * 30, "a " * 11], "test": ["a " * 25, "b", "c d", "e"]}


def test_each_split_gives_the_share_longer_than_the_window_and_the_median_length() -> None:
    entry = long_text_entry(counting_model(Reading(HEAD)), TEXTS, "test")
    assert entry == {
        "reading": "head",
        "window": 10,
        "split": "test",
        "splits": {"train": {"longer": 2 / 3, "median": 11.0}, "test": {"longer": 0.25, "median": 1.5}},
    }
    [note] = long_text_notes({"scratch": entry})
    assert note.startswith("scratch: 25% of the test texts are longer than its window of 10 pieces (median length")
    assert "train 67%" in note and note.endswith("only their head (head)")


def test_chunks_count_the_windows_each_scored_text_was_read_in() -> None:
    entry = long_text_entry(counting_model(Reading(CHUNKS, stride=2, max_chunks=8)), TEXTS, "test")
    assert entry["chunks"] == {"mean": (3 + 1 + 1 + 1) / 4, "max": 3}  # 25 pieces: [0,10) [8,18) [16,25)
    assert "1.5 windows per text on average, 3 at most" in long_text_notes({"finetune": entry})[0]


def test_pairs_and_models_that_do_not_count_have_no_entry_and_short_texts_no_note() -> None:
    assert long_text_entry(counting_model(Reading(HEAD), pairs=True), TEXTS, "test") is None
    assert long_text_entry(SimpleNamespace(has_pairs=False), TEXTS, "test") is None
    short = long_text_entry(counting_model(Reading(HEAD), window=100), TEXTS, "test")
    assert short["splits"]["test"]["longer"] == 0.0 and long_text_notes({"scratch": short}) == []
