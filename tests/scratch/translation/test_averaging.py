"""Weight averaging of the last epochs: which snapshots are kept, and that the average is the element-wise mean."""

from __future__ import annotations

import numpy as np

from scratch.translation.model import TranslationConfig, build_model
from scratch.translation.train import average_recent, keep_recent, recent_epochs


def _model():
    return build_model(TranslationConfig(vocab_size=300, num_layers=1, d_model=16, num_heads=2, d_ff=32))


def _fill(model, value: float) -> None:
    model.set_weights([np.full(w.shape, value, w.dtype) for w in model.get_weights()])


def test_only_the_newest_snapshots_are_kept(tmp_path):
    model = _model()
    for epoch in range(1, 6):
        keep_recent(model, tmp_path / "recent", epoch, count=3)
    assert recent_epochs(tmp_path / "recent") == [3, 4, 5]
    assert not list((tmp_path / "recent").glob("*.partial"))


def test_averaging_off_writes_nothing(tmp_path):
    keep_recent(_model(), tmp_path / "recent", 1, count=1)
    assert not (tmp_path / "recent").exists()


def test_the_average_is_the_mean_of_the_kept_epochs(tmp_path):
    model = _model()
    start = model.get_weights()
    for epoch, value in enumerate([1.0, 2.0, 6.0], start=1):
        _fill(model, value)
        keep_recent(model, tmp_path / "recent", epoch, count=2)  # epoch 1 (value 1) is dropped
    model.set_weights(start)
    assert average_recent(model, tmp_path / "recent") == [2, 3]
    for weight in model.get_weights():
        np.testing.assert_allclose(weight, 4.0)
