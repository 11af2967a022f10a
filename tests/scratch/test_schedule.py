import math

import numpy as np
import pytest
import tensorflow as tf

from scratch.schedule import WarmupInverseSqrt


def test_rises_linearly_then_decays_as_inverse_square_root():
    schedule = WarmupInverseSqrt(2e-3, warmup_steps=100)
    for step in (0, 10, 50, 99, 100, 150, 1000, 20000):
        n = step + 1
        expected = 2e-3 * min(n / 100, math.sqrt(100 / n))
        assert float(schedule(step)) == pytest.approx(expected, rel=1e-5)
    values = [float(schedule(s)) for s in range(300)]
    assert int(np.argmax(values)) == 99


def test_round_trips_through_keras_serialisation_and_an_optimizer():
    schedule = WarmupInverseSqrt(1e-3, warmup_steps=40)
    restored = tf.keras.optimizers.schedules.deserialize(tf.keras.optimizers.schedules.serialize(schedule))
    assert isinstance(restored, WarmupInverseSqrt) and restored.get_config() == schedule.get_config()
    optimizer = tf.keras.optimizers.AdamW(learning_rate=schedule)
    clone = tf.keras.optimizers.AdamW.from_config(optimizer.get_config())
    assert isinstance(clone._learning_rate, WarmupInverseSqrt)
    assert float(clone._learning_rate(7)) == pytest.approx(float(schedule(7)))


@pytest.mark.parametrize(("peak", "warmup", "message"), [(0.0, 10, "positive"), (1e-3, 0, "at least 1")])
def test_bad_settings_are_refused(peak, warmup, message):
    with pytest.raises(ValueError, match=message):
        WarmupInverseSqrt(peak, warmup)
