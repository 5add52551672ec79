"""The friction block's exact step (``contact.friction.disc_minimiser``): the minimiser of a 2 x 2 positive
definite quadratic over a disc, checked against the optimality conditions of the trust-region subproblem (inside:
zero gradient; on the edge: the gradient antiparallel to the point, i.e. friction against the slip) and against
a dense search of the disc's edge."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mechgym.physics.contact.friction import disc_minimiser

scales = st.sampled_from([1e-6, 1e-3, 1.0, 1e3])


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 10**6), scales, scales, st.floats(1e-8, 1.0))
def test_the_step_minimises_the_block_over_its_disc(seed, g_scale, radius, anisotropy):
    rng = np.random.default_rng(seed)
    rotation, _ = np.linalg.qr(rng.normal(size=(2, 2)))
    b = (rotation * np.array([400.0, 400.0 * anisotropy])) @ rotation.T
    g = rng.normal(size=2) * g_scale
    t = np.array(disc_minimiser(b[0, 0], b[0, 1], b[1, 1], g[0], g[1], radius))
    gradient = b @ t + g  # the slip after the step
    scale = np.abs(g).max() + np.abs(b).max() * np.abs(t).max()  # the size of its terms (its round-off)
    size = np.linalg.norm(t)
    assert size <= radius * (1 + 1e-12)
    if size < radius * (1 - 1e-12):
        assert np.abs(gradient).max() <= 1e-9 * scale
    else:
        # KKT: gradient = -lam t with lam >= 0
        lam = -(gradient @ t) / (size * size)
        assert lam >= -1e-9 * np.linalg.norm(b)
        assert np.linalg.norm(gradient + lam * t) <= 1e-8 * scale
    angles = np.linspace(0.0, 2.0 * np.pi, 4001)
    edge = radius * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    value = 0.5 * t @ b @ t + g @ t
    best = (0.5 * np.einsum("ij,jk,ik->i", edge, b, edge) + edge @ g).min()
    assert value <= best + 1e-12 * (abs(best) + abs(value))


def test_a_zero_radius_gives_no_friction():
    assert disc_minimiser(2.0, 0.1, 1.0, 0.3, -0.2, 0.0) == (0.0, 0.0)


def test_a_direction_the_joints_block_takes_no_impulse():
    """B = [[1, 1], [1, 1]] moves nothing along (1, -1): the step's impulse has no part there, and along (1, 1)
    it is the exact 1-D minimiser, clamped to the disc."""
    inside = np.array(disc_minimiser(1.0, 1.0, 1.0, 0.3, 0.1, 5.0))
    np.testing.assert_allclose(inside, [-0.1, -0.1], rtol=1e-14)
    edge = np.array(disc_minimiser(1.0, 1.0, 1.0, 1.0, 1.0, 0.1))
    np.testing.assert_allclose(edge, [-0.1 / np.sqrt(2.0)] * 2, rtol=1e-14)
