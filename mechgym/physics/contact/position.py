"""Position correction of the contacts: penetration removed by moving the poses, velocities left alone (see
:mod:`mechgym.physics.contact`)."""

from __future__ import annotations

import math

from numba import njit

from ..constraints import LIN_A, LIN_B, coupling
from ..rotation import mul, normalize, rot
from .sets import MAX_SWEEPS, POSITION_TOLERANCE


@njit(cache=True)
def _displaced(displacement, body, row, column):
    """J . (dx, dtheta) of one body's columns: the gap change from the body's correction so far (m)."""
    if body < 0:
        return 0.0
    total = 0.0
    for k in range(3):
        total += row[column + k] * displacement[body, k] + row[column + 3 + k] * displacement[body, 3 + k]
    return total


@njit(cache=True)
def _shift(bodies, state, world, displacement, body, row, column, amount):
    """(dx, dtheta) += W J^T amount for one body: dx += amount J_x / m, dtheta += R diag(1/I) R^T amount J_theta."""
    if body < 0:
        return
    q = state.quat[world, body]
    lx, ly, lz = rot(q[0], -q[1], -q[2], -q[3], row[column + 3], row[column + 4], row[column + 5])
    inv = bodies.inv_inertia[body]
    wx, wy, wz = rot(q[0], q[1], q[2], q[3], lx * inv[0], ly * inv[1], lz * inv[2])
    for k in range(3):
        displacement[body, k] += amount * row[column + k] * bodies.inv_mass[body]
    displacement[body, 3] += amount * wx
    displacement[body, 4] += amount * wy
    displacement[body, 5] += amount * wz


@njit(cache=True)
def correct_positions(bodies, state, world, contacts, scratch):
    """Remove penetration without touching velocities or momenta: find the pose changes (dx, dtheta) = W J_n^T
    lambda, lambda >= 0, that bring every touching contact's linearised gap  dist + J_n (dx, dtheta)  up to its
    target (0, or an impact's rebound gap), by projected Gauss-Seidel on the normals found after the drift (or
    at a swept body's first-touch pose), then move the centres by dx and turn the frames by dtheta
    (q <- exp(dtheta) q, world frame). Returns the sweeps used, or -1 if not converged."""
    capacity = contacts.prev_geom1.size // contacts.count.size
    base = world * capacity
    count = min(contacts.count[world], capacity)
    displacement = scratch.displacement
    displacement[:] = 0.0
    needed = False
    for c in range(count):
        i = base + c
        scratch.lam[c] = 0.0
        row = contacts.rows[i, 0]
        contacts.coupling[i, 0, 0] = coupling(bodies, state, world, contacts.body_a[i], contacts.body_b[i], row, row,
                                              scratch.vectors)
        needed = needed or (contacts.active[i] and contacts.dist[i] < contacts.gap_target[i])
    if not needed:
        return 0
    for sweep in range(MAX_SWEEPS):
        worst = 0.0
        for c in range(count):
            i = base + c
            k = contacts.coupling[i, 0, 0]
            if not contacts.active[i] or not k > 0.0:
                continue
            a, b, row = contacts.body_a[i], contacts.body_b[i], contacts.rows[i, 0]
            gap = contacts.dist[i] + _displaced(displacement, a, row, LIN_A) + _displaced(displacement, b, row, LIN_B)
            new = max(0.0, scratch.lam[c] + (contacts.gap_target[i] - gap) / k)
            change = new - scratch.lam[c]
            if change == 0.0:
                continue
            scratch.lam[c] = new
            _shift(bodies, state, world, displacement, a, row, LIN_A, change)
            _shift(bodies, state, world, displacement, b, row, LIN_B, change)
            worst = max(worst, abs(change) * k)
        if worst <= POSITION_TOLERANCE:
            for body in range(displacement.shape[0]):
                _move(state, world, body, displacement[body])
            return sweep + 1
    return -1


@njit(cache=True)
def _move(state, world, body, d):
    """c += d[:3]; q <- exp(d[3:]) q, the rotation by the angle |d[3:]| about d[3:] in the world frame."""
    for k in range(3):
        state.com[world, body, k] += d[k]
    angle = math.sqrt(d[3] * d[3] + d[4] * d[4] + d[5] * d[5])
    if angle == 0.0:
        return
    s = math.sin(0.5 * angle) / angle
    q = state.quat[world, body]
    q[0], q[1], q[2], q[3] = mul(math.cos(0.5 * angle), s * d[3], s * d[4], s * d[5], q[0], q[1], q[2], q[3])
    normalize(q)
