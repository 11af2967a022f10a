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


def test_the_cooldown_scales_the_last_steps_linearly_down_to_zero():
    warmup, total, cooldown = 20, 200, 50
    plain = WarmupInverseSqrt(1e-3, warmup)
    cooled = WarmupInverseSqrt(1e-3, warmup, total_steps=total, cooldown_steps=cooldown)
    for step in range(total + 5):  # the optimizer's step, counted from 0; the schedule's n is step + 1
        n = step + 1
        factor = min(1.0, max(0.0, (total - n + 1) / cooldown))
        assert float(cooled(step)) == pytest.approx(float(plain(step)) * factor, rel=1e-5, abs=1e-12)
    assert float(cooled(total - cooldown - 1)) == pytest.approx(float(plain(total - cooldown - 1)), rel=1e-6)
    assert 0 < float(cooled(total - 1)) < 1e-3 * math.sqrt(warmup / total) / cooldown * 1.001  # the last step
    assert float(cooled(total)) == 0.0 and float(cooled(total + 100)) == 0.0  # past the plan the rate stays 0
    restored = tf.keras.optimizers.schedules.deserialize(tf.keras.optimizers.schedules.serialize(cooled))
    assert restored.get_config() == cooled.get_config() and float(restored(180)) == float(cooled(180))


def test_a_cooldown_longer_than_the_plan_is_refused():
    with pytest.raises(ValueError, match=r"cooldown_steps must be in \[0, total_steps=10\], got 11"):
        WarmupInverseSqrt(1e-3, 5, total_steps=10, cooldown_steps=11)


def test_adamw_decays_kernels_but_not_biases_or_layer_norm_parameters() -> None:
    from scratch.schedule import transformer_adamw

    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3), tf.keras.layers.LayerNormalization()])
    for variable in model.trainable_variables:
        variable.assign(tf.ones_like(variable))
    optimizer = transformer_adamw(WarmupInverseSqrt(1e-2, warmup_steps=1), weight_decay=0.5, clip_norm=1.0)
    optimizer.apply_gradients([(tf.zeros_like(v), v) for v in model.trainable_variables])  # only the decay moves
    after = {v.name.split("/")[-1].split(":")[0]: float(v.numpy().mean()) for v in model.trainable_variables}
    assert after == pytest.approx({"kernel": 1 - 0.5 * 1e-2, "bias": 1.0, "gamma": 1.0, "beta": 1.0})
