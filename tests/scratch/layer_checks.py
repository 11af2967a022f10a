"""The checks every scratch layer gets: config round trip, shape and dtype, weight count, one fit step."""

from __future__ import annotations

import numpy as np
import tensorflow as tf


def check_layer(
    layer_class: type,
    init_kwargs: dict,
    inputs: np.ndarray,
    expected_shape: tuple,
    expected_weights: int,
    expected_dtype: tf.DType = tf.float32,
    call_kwargs: dict | None = None,
) -> tf.keras.layers.Layer:
    """Builds `layer_class(**init_kwargs)` and checks it the way every layer of the package must pass.

    - `from_config(get_config())` gives an equal config and, with the weights copied, the same outputs;
    - the output has `expected_shape` and `expected_dtype`;
    - the layer holds `expected_weights` trainable scalars;
    - one `fit` step of a model around the layer runs and changes its weights (when it has any).
    """
    call_kwargs = call_kwargs or {}
    layer = layer_class(**init_kwargs)
    outputs = layer(inputs, **call_kwargs)
    assert tuple(outputs.shape) == expected_shape
    assert outputs.dtype == expected_dtype
    assert sum(int(np.prod(w.shape)) for w in layer.trainable_weights) == expected_weights

    config = layer.get_config()
    clone = layer_class.from_config(config)
    assert clone.get_config() == config
    clone(inputs, **call_kwargs)
    clone.set_weights(layer.get_weights())
    np.testing.assert_allclose(clone(inputs, **call_kwargs), outputs, atol=1e-6)
    serialized = tf.keras.saving.serialize_keras_object(layer)
    assert serialized["registered_name"].startswith("scratch>")
    assert type(tf.keras.saving.deserialize_keras_object(serialized, safe_mode=True)) is layer_class

    if expected_weights:
        _one_fit_step(layer_class, init_kwargs, inputs, call_kwargs)
    return layer


def _one_fit_step(layer_class: type, init_kwargs: dict, inputs: np.ndarray, call_kwargs: dict) -> None:
    layer = layer_class(**init_kwargs)
    source = tf.keras.Input(shape=inputs.shape[1:], dtype=tf.as_dtype(inputs.dtype))
    outputs = layer(source, **call_kwargs)
    flat = tf.keras.layers.Flatten()(tf.cast(outputs, tf.float32)) if len(outputs.shape) > 2 else outputs
    model = tf.keras.Model(source, tf.keras.layers.Dense(1)(flat))
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
    before = [w.numpy().copy() for w in layer.trainable_weights]
    history = model.fit(inputs, np.ones([len(inputs), 1], np.float32), epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    assert any(not np.allclose(a, w.numpy()) for a, w in zip(before, layer.trainable_weights))
