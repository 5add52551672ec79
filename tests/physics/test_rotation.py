"""Quaternion helpers and the NO_SQUISH free-rotor drift, up to the Dzhanibekov flip of a free box."""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

import mechgym
from mechgym.physics.rotation import free_rotor_drift
from mechgym.physics.vectors import quat_mul, rotate, rotate_inverse

from .scenes import free_body, key, quat_to_matrix, scene

RNG = np.random.default_rng(7)


def random_quat():
    q = RNG.normal(size=4)
    return q / np.linalg.norm(q)


def test_rotations_agree_with_the_rotation_matrix():
    q, v = random_quat(), RNG.normal(size=3)
    out = np.empty(3)
    rotate(q, v, out)
    np.testing.assert_allclose(out, quat_to_matrix(q) @ v, rtol=0, atol=1e-15)
    rotate_inverse(q, v, out)
    np.testing.assert_allclose(out, quat_to_matrix(q).T @ v, rtol=0, atol=1e-15)
    a, b, ab = random_quat(), random_quat(), np.empty(4)
    quat_mul(a, b, ab)
    np.testing.assert_allclose(quat_to_matrix(ab), quat_to_matrix(a) @ quat_to_matrix(b), rtol=0, atol=1e-15)


def test_the_drift_is_time_reversible():
    q0, momentum, inv_inertia = random_quat(), RNG.normal(size=3), 1.0 / np.array([0.4, 0.9, 1.3])
    q = q0.copy()
    free_rotor_drift(q, inv_inertia, momentum, 0.05)
    assert np.abs(q - q0).max() > 1e-3
    free_rotor_drift(q, inv_inertia, momentum, -0.05)
    np.testing.assert_allclose(q, q0, rtol=0, atol=1e-15)


# Box 0.3 x 0.2 x 0.1 m, 1 kg: I = m (b^2 + c^2) / 12 about each side, spun about the intermediate axis.
INERTIA = np.array([0.2**2 + 0.1**2, 0.3**2 + 0.1**2, 0.3**2 + 0.2**2]) / 12
OMEGA0 = np.array([0.01, 10.0, 0.01])
TOP = scene(free_body(geom='type="box" size="0.15 0.1 0.05" mass="1"'), option='gravity="0 0 0"',
            keyframe=key([0, 0, 0, 1, 0, 0, 0], np.r_[0, 0, 0, OMEGA0]))


def test_the_free_top_conserves_momentum_exactly_and_energy_without_drift():
    sim = mechgym.load(TOP, backend="mechgym", dt=0.01)
    momentum0, energy0 = sim.angular_momentum("b"), sim.energy()
    energy = np.empty(1000)
    for chunk in range(1000):  # 1000 s
        sim.step(100)
        energy[chunk] = sim.energy()
        np.testing.assert_allclose(sim.angular_momentum("b"), momentum0, rtol=1e-12, atol=0)
    error = (energy - energy0) / energy0
    # A symplectic splitting conserves a modified energy within O((h w)^2) = O(1e-2) x a small constant;
    # with h w = 0.1 the bound 1e-3 leaves room, and the error stays bounded rather than drifting.
    assert np.abs(error).max() < 1e-3
    first, last = np.abs(error[:100]).max(), np.abs(error[-100:]).max()
    assert last < 1.5 * first


def flip_times(dt, duration):
    """Times (s) at which the body-frame spin about the intermediate axis changes sign."""
    sim = mechgym.load(TOP, backend="mechgym", dt=dt)
    spin = np.empty(round(duration / dt) + 1)
    spin[0] = sim.qvel[4]
    for k in range(1, spin.size):
        sim.step(1)
        spin[k] = sim.qvel[4]
    i = np.flatnonzero(np.sign(spin[1:]) != np.sign(spin[:-1]))
    return (i + spin[i] / (spin[i] - spin[i + 1])) * dt


def euler_equations(_, w):
    i1, i2, i3 = INERTIA
    return [(i2 - i3) * w[1] * w[2] / i1, (i3 - i1) * w[2] * w[0] / i2, (i1 - i2) * w[0] * w[1] / i3]


def test_dzhanibekov_flip_times_converge_at_second_order_to_the_reference():
    duration = 30.0
    reference = solve_ivp(euler_equations, (0, duration), OMEGA0, method="DOP853", rtol=1e-13, atol=1e-15,
                          events=lambda _, w: w[1]).t_events[0]
    assert reference.size == 8  # the box flips every ~3.5 s
    errors = []
    for dt in (0.01, 0.005):
        flips = flip_times(dt, duration)
        assert flips.size == reference.size
        errors.append(np.abs(flips - reference).max())
    # The reference (rtol 1e-13) is exact at this scale. The splitting perturbs the rotor's frequencies by a
    # relative O((h w)^2 / 12), so flip times drift by at most ~(h w)^2 / 12 x t: 0.025 s after 30 s at
    # dt = 10 ms (h w = 0.1). Locating each crossing by linear interpolation adds another O(h^2) term, so
    # halving dt must divide the error by ~4.
    assert errors[0] < (0.01 * 10) ** 2 / 12 * duration
    assert 3.5 < errors[0] / errors[1] < 4.5
