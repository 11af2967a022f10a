"""training_curves.png holds both models on one time axis."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.image import imread

from compare.diagnosis.training_curves_figure import training_curves_figure, write_training_curves

CURVES = {
    "finetune": [
        {"epoch": 1, "seconds": 300.0, "val_accuracy": 0.88},
        {"epoch": 2, "seconds": 600.0, "val_accuracy": 0.9},
    ],
    "scratch": [{"epoch": 1, "seconds": 9.0, "val_accuracy": 0.467}],
}


def test_each_model_is_one_line_through_its_epochs():
    fig = training_curves_figure(CURVES)
    ax = fig.axes[0]
    lines = {line.get_label().split(" ")[0]: line for line in ax.get_lines()}
    assert sorted(lines) == ["finetune", "scratch"]
    np.testing.assert_allclose(lines["finetune"].get_xdata(), [300.0, 600.0])
    np.testing.assert_allclose(lines["finetune"].get_ydata(), [0.88, 0.9])
    np.testing.assert_allclose(lines["scratch"].get_xdata(), [9.0])
    # 600 s against 9 s: a linear axis would squash the from-scratch run against zero.
    assert ax.get_xscale() == "log"
    plt.close(fig)


def test_comparable_durations_keep_a_linear_axis():
    curves = {"a": CURVES["finetune"], "b": [{"epoch": 1, "seconds": 200.0, "val_accuracy": 0.8}]}
    fig = training_curves_figure(curves)
    assert fig.axes[0].get_xscale() == "linear"
    plt.close(fig)


def test_write_training_curves_writes_a_readable_png(tmp_path):
    path = write_training_curves(CURVES, tmp_path)
    assert path == tmp_path / "training_curves.png"
    image = imread(path)
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100
