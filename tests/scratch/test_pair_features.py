"""scratch.pair_features: InferSent's [u, v, |u - v|, u * v], by hand."""

import numpy as np
import tensorflow as tf

from scratch.pair_features import PairFeatures


def test_the_features_by_hand_and_a_swap_swaps_only_u_and_v():
    u = np.array([[1.0, -2.0, 0.5]], np.float32)
    v = np.array([[3.0, 1.0, 0.5]], np.float32)
    features = PairFeatures()([u, v]).numpy()
    np.testing.assert_allclose(features, [[1, -2, 0.5, 3, 1, 0.5, 2, 3, 0, 3, -2, 0.25]])
    swapped = PairFeatures()([v, u]).numpy()
    np.testing.assert_allclose(swapped, np.concatenate([v, u, features[:, 6:]], axis=1))


def test_config_round_trip_and_registered_name():
    layer = PairFeatures(name="pair_features")
    clone = PairFeatures.from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()
    serialized = tf.keras.saving.serialize_keras_object(layer)
    assert serialized["registered_name"] == "scratch>PairFeatures"
    assert layer.compute_output_shape([(None, 8), (None, 8)]) == tf.TensorShape([None, 32])
