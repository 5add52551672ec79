"""The two variants of SHAKE that seed 000 names as traps, kept here (not in the engine) for the tests that hold
those traps closed: impulses along the current gradient instead of G(q_n) (trap 1), and Jacobi sweeps, every
row's error evaluated at the same poses and corrected alone (trap 2)."""

from __future__ import annotations

import numpy as np
from numba import njit

from mechgym.physics import constraints as rattle


@njit(cache=True)
def point_on_rod(x, v, length, gravity, h, n, current_gradient):
    """``n`` RATTLE steps of ``h`` s of a point mass on a massless rod of ``length`` m from the origin, gravity
    ``gravity`` m/s^2 along -z; ``x``, ``v`` (3,) stepped in place. A step: half kick, drift, SHAKE on
    g = |x|^2 - l^2 (impulses lambda d per unit mass, v += lambda d and x += h lambda d, with lambda from the
    linearised g(x + h lambda d) = g(x) + 2 h lambda x.d, to round-off), half kick, and v projected onto the rod's
    tangent plane. d is the start gradient x_n (RATTLE) or, with ``current_gradient``, the current x (trap 1).
    Returns the energy per unit mass after each step (J/kg, zero at the pivot's height)."""
    energies = np.empty(n)
    start = np.empty(3)
    for k in range(n):
        v[2] -= 0.5 * h * gravity
        start[:] = x
        x += h * v
        for _ in range(100):
            g = x @ x - length * length
            if abs(g) <= 1e-15 * length * length:
                break
            direction = x.copy() if current_gradient else start
            impulse = -g / (2.0 * h * (x @ direction))
            v += impulse * direction
            x += h * impulse * direction
        v[2] -= 0.5 * h * gravity
        v -= (x @ v) / (x @ x) * x
        energies[k] = 0.5 * (v @ v) + gravity * x[2]
    return energies


def jacobi_shake(rows, bodies, state, work, h, sweeps):
    """SHAKE by Jacobi sweeps (trap 2) on world 0's equality rows, after ``constraints.begin_step`` and the drift:
    each sweep evaluates every row at the same poses, g_r, and then applies every row's impulse
    P_r = -g_r / (h G_r W G0_r^T) along G0_r = G_r(q_n) and drifts its bodies again from the start of the step.
    Returns the largest |g| before each sweep."""
    errors = []
    for _ in range(sweeps):
        values = [rattle.evaluate_row(rows, r, state, 0, work.gradient[r]) for r in range(rows.kind.size)]
        rattle.take_spins(bodies, state.quat[0], work.spin)
        impulses = [-value / (h * rattle.coupling(bodies, work.spin, rows.body_a[r], rows.body_b[r], work.gradient[r],
                                                  work.start_gradient[r]))
                    for r, value in enumerate(values)]
        for r, impulse in enumerate(impulses):
            a, b = rows.body_a[r], rows.body_b[r]
            rattle.apply_impulse(bodies, state, 0, a, b, work.start_gradient[r], impulse)
            rattle.redrift(bodies, state, 0, a, h, work)
            rattle.redrift(bodies, state, 0, b, h, work)
        errors.append(max(abs(value) for value in values))
    return errors
