"""Seesaw: a plank on a hinge with two balls pinned to it. RATTLE's coupled SHAKE converges where Jacobi sweeps
diverge (seed 000, trap 2), and the constrained motion is the compound pendulum of the closed-form ODE."""

from __future__ import annotations

import math

import numpy as np
from scipy.integrate import solve_ivp

from mechgym.physics import constraints as rattle
from mechgym.physics.state import energy
from mechgym.physics.step import drift, opening_kick

from .helpers import ENERGY, ENV, GRAVITY, RESIDUAL, run, seesaw
from .traps import jacobi_shake

H = 1e-3


def drifted_seesaw():
    """The seesaw after one opening kick and unconstrained drift, ready for SHAKE."""
    bodies, rows, state = seesaw()
    work = rattle.Workspace.empty(state.com.shape[1], rows.kind.size)
    zeros = np.zeros((state.com.shape[1], 6))
    rattle.begin_step(rows, bodies, state, 0, H, work)
    opening_kick(bodies, ENV, state, 0, 0.5 * H, zeros, zeros)
    drift(bodies, state, 0, H)
    return bodies, rows, state, work


def largest_error(rows, state, work):
    grad = np.zeros(12)
    return max(abs(rattle.evaluate_row(rows, r, state, 0, grad)) for r in range(rows.kind.size))


def test_the_coupled_solve_converges_where_jacobi_sweeps_diverge():
    bodies, rows, state, work = drifted_seesaw()
    before = largest_error(rows, state, work)
    assert before > 1e-7  # the drift leaves every row's error well above the tolerance

    jacobi_state, jacobi_work = state.copy(), rattle.Workspace(*(a.copy() for a in work))
    errors = jacobi_shake(rows, bodies, jacobi_state, jacobi_work, H, 60)
    assert not min(errors) <= rattle.Solver().tolerance
    assert not largest_error(rows, jacobi_state, jacobi_work) < 1e3 * before  # grows (or turns non-finite)

    solver = rattle.Solver()
    sweeps = rattle.shake(rows, bodies, solver, state, 0, H, work)
    assert 1 <= sweeps < solver.max_sweeps
    assert largest_error(rows, state, work) <= 2 * solver.tolerance


def hinge_angle(quat):
    """Angle phi of the plank about +y: its x axis is (cos phi, 0, -sin phi)."""
    w, x, y, z = quat
    return math.atan2(-2.0 * (x * z - w * y), 1.0 - 2.0 * (y * y + z * z))


def exact_angle(t):
    """I phi'' = -dV/dphi with V = -g sin(phi) (m1 x1 + m2 x2) and I = I_plank,yy + m1 x1^2 + m2 x2^2: the
    balls are pinned at their centres, so their own spin is free and adds no inertia about the hinge."""
    inertia = 1.0 / 12.0 * (2.0**2 + 0.05**2) + 1.0 * 0.8**2 + 2.0 * 0.6**2
    moment = 1.0 * -0.8 + 2.0 * 0.6

    def rhs(_, y):
        return [y[1], GRAVITY * moment * math.cos(y[0]) / inertia]

    solution = solve_ivp(rhs, (0.0, t), [0.3, 1.5], rtol=1e-12, atol=1e-12, method="DOP853")
    return solution.y[0, -1]


def test_the_seesaw_swings_as_the_compound_pendulum_with_second_order_error():
    duration, errors, energy_errors = 1.0, [], []
    for h in (2e-3, 1e-3):
        bodies, rows, state = seesaw()
        initial = energy(bodies, ENV.gravity, state, 0)
        n = int(round(duration / h))
        done, trace, _ = run(bodies, rows, state, h, n)
        assert done == n
        assert np.max(trace[:, RESIDUAL]) <= 1e-10
        errors.append(hinge_angle(state.quat[0, 0]) - exact_angle(duration))
        energy_errors.append(np.max(np.abs(trace[:, ENERGY] - initial)))
    assert abs(errors[1]) < 1e-4
    assert 3.5 < errors[0] / errors[1] < 4.5
    assert 3.0 < energy_errors[0] / energy_errors[1] < 5.0
