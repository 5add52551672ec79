"""One contact's friction update in the projected Gauss-Seidel sweeps (``contact.solve``, ``contact.dense``):
Coulomb's circular cone, static or kinetic."""

from __future__ import annotations

import math

from numba import njit


@njit(cache=True)
def disc(t1, t2, limit):
    """Radial projection of the tangential impulse (t1, t2) (N s) onto the disc |t| <= limit."""
    size = math.sqrt(t1 * t1 + t2 * t2)
    if size <= limit:
        return t1, t2
    return t1 * limit / size, t2 * limit / size


@njit(cache=True)
def friction_step(k, p1, p2, v1, v2, limit, sliding):
    """The tangential impulses (N s) after one Gauss-Seidel step of a contact's friction, from (p1, p2) at the
    slip (v1, v2) (m/s) with the coupling ``k`` (3 x 3) and the disc radius ``limit`` (mu p_n).

    Static: the impulse that stops the slip exactly (the 2 x 2 tangent block solved), if it lies in the disc.
    Otherwise (and for a sliding point, against the kinetic disc) a projected gradient step: the increment
    -v_t / k_t, k_t the largest eigenvalue of K_tt, projected radially onto the disc. Both steps lower the
    block's quadratic, so the sweeps converge; for a sliding point the step's fixed point is mu_k p_n opposite
    the slip (maximal dissipation). A tangent the joints block (zero coupling, ``contact.joined``) takes no
    impulse; with one left, both steps are the exact 1-D step -v / k clamped to [-limit, limit]."""
    if k[1, 1] > 0.0 and k[2, 2] > 0.0:
        det = k[1, 1] * k[2, 2] - k[1, 2] * k[2, 1]
        t1 = p1 - (k[2, 2] * v1 - k[1, 2] * v2) / det
        t2 = p2 - (k[1, 1] * v2 - k[2, 1] * v1) / det
        if sliding or t1 * t1 + t2 * t2 > limit * limit:
            k_t = 0.5 * (k[1, 1] + k[2, 2]) + math.sqrt((0.5 * (k[1, 1] - k[2, 2])) ** 2 + k[1, 2] * k[2, 1])
            t1, t2 = disc(p1 - v1 / k_t, p2 - v2 / k_t, limit)
        return t1, t2
    t1 = p1 - v1 / k[1, 1] if k[1, 1] > 0.0 else 0.0
    t2 = p2 - v2 / k[2, 2] if k[2, 2] > 0.0 else 0.0
    return disc(t1, t2, limit)
