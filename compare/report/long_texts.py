"""What each model cut of long texts: results.json `data.long_texts` and the report's notes on it.

Per model: how it read a text longer than its window (`core.long_text`, run.json `data.options.long_text`; `head`
for a run recorded before the option), its window in pieces, and per split (train and the scored one) the share of
texts longer than the window and their median length in its own pieces (each model counts with its own
tokenizer); under `chunks`, the windows each scored text was read in (mean, most).
"""

from __future__ import annotations

from core.long_text import chunk_counts, length_stats


def long_text_entry(classifier, texts: dict[str, list[str]], scored: str) -> dict | None:
    """results.json `data.long_texts.<name>` for one model, or None when its side does not count pieces (or a pair
    task, whose two texts are cut together).

    Args:
        classifier: the model (`core.classifier.BaseClassifier`: `reading`, `window`, `piece_counts`).
        texts: split name -> its texts (train and the scored split).
        scored: the scored split's name.
    """
    counting = getattr(classifier, "piece_counts", None)  # a Classifier that is no BaseClassifier may not count
    if classifier.has_pairs or counting is None:
        return None
    lengths = {split: counting(rows) for split, rows in texts.items()}
    if any(counts is None for counts in lengths.values()):
        return None
    reading, window = classifier.reading, classifier.window
    entry = {
        "reading": reading.long_text,
        "window": window,
        "split": scored,
        "splits": {split: length_stats(counts, window) for split, counts in lengths.items()},
    }
    if reading.pools:
        entry["chunks"] = chunk_counts([len(reading.spans(int(n), window)) for n in lengths[scored]])
    return entry


def long_text_notes(long_texts: dict[str, dict]) -> list[str]:
    """One sentence per model of `data.long_texts` whose scored texts were cut: what share, and how it read them.

    >>> entry = {"reading": "head-tail", "window": 126, "split": "test",
    ...          "splits": {"test": {"longer": 0.42, "median": 120.0}, "train": {"longer": 0.4, "median": 118.0}}}
    >>> long_text_notes({"finetune": entry})
    ['finetune: 42% of the test texts are longer than its window of 126 pieces (median length 120 pieces; train 40%); it read their first quarter and last three quarters (head-tail)']
    """
    notes = []
    for name, entry in long_texts.items():
        scored = entry["splits"][entry["split"]]
        if not scored["longer"]:
            continue
        others = "; ".join(
            f"{split} {stats['longer']:.0%}" for split, stats in entry["splits"].items() if split != entry["split"]
        )
        read = READ[entry["reading"]]
        if "chunks" in entry:
            read += f": {entry['chunks']['mean']:.1f} windows per text on average, {entry['chunks']['max']} at most"
        notes.append(
            f"{name}: {scored['longer']:.0%} of the {entry['split']} texts are longer than its window of "
            f"{entry['window']} pieces (median length {scored['median']:g} pieces{'; ' + others if others else ''}); "
            f"it read {read}"
        )
    return notes


READ = {
    "head": "only their head (head)",
    "head-tail": "their first quarter and last three quarters (head-tail)",
    "chunks": "each in overlapping windows pooled into one answer (chunks)",
}
