import math

import numpy as np
import tensorflow as tf

from scratch.positional_encoding import SinusoidalPositionEncoding, sinusoid
from tests.scratch.layer_checks import check_layer


def test_sinusoid_values_at_known_positions():
    table = sinusoid(50, 16).numpy()
    assert table.shape == (50, 16)
    np.testing.assert_allclose(table[0], [0.0, 1.0] * 8, atol=1e-7)  # sin(0), cos(0) in every pair
    np.testing.assert_allclose(table[1, :2], [math.sin(1.0), math.cos(1.0)], atol=1e-6)  # frequency 1 for i=0
    # PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(same), written out for three cells
    np.testing.assert_allclose(table[7, 4], math.sin(7 / 10000 ** (4 / 16)), atol=1e-6)
    np.testing.assert_allclose(table[7, 5], math.cos(7 / 10000 ** (4 / 16)), atol=1e-6)
    np.testing.assert_allclose(table[49, 15], math.cos(49 / 10000 ** (14 / 16)), atol=1e-6)


def test_sinusoid_odd_depth_keeps_the_sine_of_the_last_pair():
    table = sinusoid(5, 5).numpy()
    assert table.shape == (5, 5)
    np.testing.assert_allclose(table[3, 4], math.sin(3 / 10000 ** (4 / 5)), atol=1e-6)


def test_layer_adds_the_table_to_every_sequence_and_keeps_the_mask():
    inputs = np.random.default_rng(0).normal(size=(3, 6, 8)).astype(np.float32)
    layer = check_layer(SinusoidalPositionEncoding, {}, inputs, expected_shape=(3, 6, 8), expected_weights=0)
    np.testing.assert_allclose(layer(inputs) - inputs, np.broadcast_to(sinusoid(6, 8).numpy(), (3, 6, 8)), atol=1e-6)
    mask = tf.constant([[True] * 6, [True] * 2 + [False] * 4, [True] * 6])
    assert layer.compute_mask(inputs, mask) is mask


def test_a_sequence_starting_later_gets_the_rows_of_its_positions():
    np.testing.assert_allclose(sinusoid(3, 16, start=7).numpy(), sinusoid(10, 16).numpy()[7:], atol=1e-6)
    inputs = np.zeros((2, 1, 8), np.float32)  # one position, as a cached decoding step feeds it
    layer = SinusoidalPositionEncoding()
    np.testing.assert_allclose(layer(inputs, start=tf.constant(4)).numpy()[0, 0], sinusoid(5, 8).numpy()[4], atol=1e-6)


def test_each_row_may_start_at_its_own_position():
    inputs = np.zeros((3, 2, 8), np.float32)
    out = SinusoidalPositionEncoding()(inputs, start=tf.constant([0, 4, 9])).numpy()
    table = sinusoid(11, 8).numpy()
    for row, first in enumerate((0, 4, 9)):
        np.testing.assert_allclose(out[row], table[first : first + 2], atol=1e-6)
