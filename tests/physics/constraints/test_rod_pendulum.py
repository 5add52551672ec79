"""Rod pendulum (seed 000): RATTLE conserves energy to O(dt^2) with no drift, keeps the rod length to
round-off and gives the exact period 4 sqrt(l/g) K(sin(theta0/2)) with a second-order error; the
current-gradient variant (trap 1, ``traps``) loses a first-order share of the energy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import ellipk

from .helpers import DEFAULT, ENERGY, GRAVITY, RESIDUAL, VX, X, rod_pendulum, run
from .traps import point_on_rod

THETA0 = 2.0  # rad
LENGTH = 1.0  # m
# Exact period of the rigid pendulum: T = 4 sqrt(l/g) K(k), k = sin(theta0/2), scipy's ellipk takes m = k^2.
PERIOD = 4.0 * math.sqrt(LENGTH / GRAVITY) * ellipk(math.sin(0.5 * THETA0) ** 2)


def ten_periods(h, solver=DEFAULT):
    bodies, rows, state = rod_pendulum(THETA0, LENGTH)
    initial = GRAVITY * -LENGTH * math.cos(THETA0)  # potential -m g . c = m |g| z of the 1 kg ball at rest (J)
    n = int(math.ceil(10.5 * PERIOD / h))
    done, trace, _ = run(bodies, rows, state, h, n, solver)
    assert done == n
    return trace, initial


def largest_relative_energy_error(trace, initial):
    return float(np.max(np.abs(trace[:, ENERGY] - initial)) / abs(initial))


@pytest.mark.parametrize(("h", "bound"), [(1e-4, 1.5e-7), (1e-3, 1.5e-5)])
def test_energy_error_is_second_order_without_drift_and_the_rod_keeps_its_length(h, bound):
    trace, initial = ten_periods(h)
    assert largest_relative_energy_error(trace, initial) <= bound
    # No secular drift: the energy error at the end is far below the largest oscillation of it.
    assert abs(trace[-1, ENERGY] - initial) / abs(initial) < 0.1 * bound
    assert np.max(trace[:, RESIDUAL]) <= 1e-10


def test_the_energy_is_rattles_and_impulses_along_the_current_gradient_lose_it_at_first_order():
    """Trap 1 stays closed: the engine's energy is that of RATTLE on a point mass (``traps.point_on_rod``, an
    independent reference: the rod acts at the ball's centre, so its spin takes no part), and the same reference
    with impulses along the current gradient loses ~10 % of it in ten periods."""
    h = 1e-4
    trace, initial = ten_periods(h)

    def reference(current_gradient):
        position = np.array([LENGTH * math.sin(THETA0), 0.0, -LENGTH * math.cos(THETA0)])
        return point_on_rod(position, np.zeros(3), LENGTH, GRAVITY, h, trace.shape[0], current_gradient)

    np.testing.assert_allclose(trace[:, ENERGY], reference(False), rtol=0.0, atol=1e-10 * abs(initial))
    assert (initial - reference(True)[-1]) / abs(initial) > 0.05


def measured_period(h):
    """Mean time between upward zero crossings of x, each located on the cubic Hermite interpolant of
    (x, v_x) between the steps around it (interpolation error O(h^4), below the integrator's O(h^2))."""
    trace, _ = ten_periods(h)
    x, v = trace[:, X], trace[:, VX]
    crossings = []
    for k in np.nonzero((x[:-1] < 0.0) & (x[1:] >= 0.0))[0]:
        x0, x1, d0, d1 = x[k], x[k + 1], h * v[k], h * v[k + 1]
        s = -x0 / (x1 - x0)
        for _ in range(20):  # Newton on the Hermite cubic p(s)
            p = ((2 * s**3 - 3 * s**2 + 1) * x0 + (s**3 - 2 * s**2 + s) * d0 + (-2 * s**3 + 3 * s**2) * x1
                 + (s**3 - s**2) * d1)
            dp = ((6 * s**2 - 6 * s) * x0 + (3 * s**2 - 4 * s + 1) * d0 + (-6 * s**2 + 6 * s) * x1
                  + (3 * s**2 - 2 * s) * d1)
            s -= p / dp
        crossings.append((k + 1 + s) * h)  # trace row k holds the state at t = (k + 1) h
    assert len(crossings) >= 10
    return (crossings[-1] - crossings[0]) / (len(crossings) - 1)


def test_period_matches_the_elliptic_integral_with_a_second_order_error():
    coarse = measured_period(1e-3) - PERIOD
    fine = measured_period(5e-4) - PERIOD
    assert abs(coarse) < 1e-4 * PERIOD
    assert 3.5 < coarse / fine < 4.5
