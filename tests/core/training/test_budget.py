from __future__ import annotations

import numpy as np
import pytest
from sklearn.utils.class_weight import compute_class_weight

from core.training.budget import balanced_class_weights, bucketed_steps, plan_training

# Train rows and batch size give the steps per epoch (ceil(rows / batch) when every text is in one length
# bucket); the budget then gives the epochs and the steps a schedule spans. Worked by hand:
#   rows  batch  steps/epoch  epochs  max  min  default -> epochs  total
PLANS = [
    (200, 16, 13, None, None, 0, 3, 3, 39),  # no budget: the side's default epochs
    (200, 16, 13, 5, None, 0, 3, 5, 65),  # no budget, --epochs 5
    (200, 16, 13, None, 30, 0, 3, 3, 30),  # ceil(30 / 13) = 3 epochs, the third cut after 4 steps
    (200, 16, 13, None, 26, 0, 3, 2, 26),  # exactly two epochs
    (200, 16, 13, 1, 30, 0, 3, 1, 13),  # --epochs 1 bounds the budget's 3 epochs
    (1000, 32, 32, None, 100, 50, 8, 4, 100),  # ceil(100 / 32) = 4
    (67349, 32, 2105, None, 3000, 0, 3, 2, 3000),  # SST-2: 3,000 steps take part of a second epoch
    (67349, 128, 527, None, None, 2000, 8, 8, 4216),  # --min-steps 2000 fits in the 8 default epochs
    (500, 128, 4, None, None, 100, 8, 25, 100),  # ... and stretches them on a small split: ceil(100 / 4)
    (10, 32, 1, None, 5, 0, 3, 5, 5),  # a one-step epoch
]


@pytest.mark.parametrize(
    ("rows", "batch", "per_epoch", "epochs", "max_steps", "min_steps", "default", "want", "total"), PLANS
)
def test_the_budget_gives_the_epochs(
    rows, batch, per_epoch, epochs, max_steps, min_steps, default, want, total
) -> None:
    assert bucketed_steps(np.full(rows, 7), [8, 16], batch) == per_epoch  # one bucket: ceil(rows / batch)
    plan = plan_training(per_epoch, default, max_steps=max_steps, min_steps=min_steps, epochs=epochs)
    assert (plan.steps_per_epoch, plan.epochs, plan.total_steps) == (per_epoch, want, total)


def test_every_length_bucket_ends_with_a_partial_batch() -> None:
    # Boundaries 4 and 8: lengths 1-3, 4-7 and 8+ fall in three buckets of 5, 3 and 9 texts.
    lengths = np.array([1, 2, 3, 3, 2] + [4, 7, 5] + [8] * 9)
    assert bucketed_steps(lengths, [4, 8], batch_size=4) == 2 + 1 + 3


@pytest.mark.parametrize("labels", [[0, 0, 0, 1], [0, 1, 2, 2, 2, 2, 1, 0, 2], [1, 1, 2, 2, 2]])
def test_balanced_class_weights_are_scikit_learns(labels: list[int]) -> None:
    labels = np.array(labels)
    present = np.unique(labels)
    expected = compute_class_weight("balanced", classes=present, y=labels)
    weights = balanced_class_weights(labels, num_labels=3)
    np.testing.assert_allclose([weights[k] for k in present], expected)
    assert all(weights[k] == 1.0 for k in set(range(3)) - set(present))  # never in the loss
