"""The package's own tests: plain functions, so that they run under pytest
in development and by a loop where only the package is installed."""

import numpy as np

import ordinary


def reference_blur(x):
    padded = np.concatenate([x[:1], x, x[-1:]])
    return 0.25 * padded[:-2] + 0.5 * padded[1:-1] + 0.25 * padded[2:]


def test_blur_float32():
    x = np.random.default_rng(1).random(300, dtype=np.float32)
    np.testing.assert_allclose(ordinary.blurred(x), reference_blur(x), rtol=1e-6)


def test_blur_float64():
    x = np.random.default_rng(2).random(77)
    np.testing.assert_allclose(ordinary.blurred(x), reference_blur(x), rtol=1e-12)


def test_mix():
    rng = np.random.default_rng(3)
    a, b = rng.random(129), rng.random(129)
    np.testing.assert_allclose(ordinary.mixed(a, b, 0.25), a + (b - a) * 0.25, rtol=1e-12)


def test_gained():
    x = np.random.default_rng(4).random(50)
    gains = np.linspace(1.0, 2.0, 4)[np.arange(50) % 4]
    np.testing.assert_allclose(ordinary.gained(x), x * gains + 0.5, rtol=1e-12)
