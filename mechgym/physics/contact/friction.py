"""One contact's friction update in the projected Gauss-Seidel sweeps (``contact.solve``, ``contact.dense``):
Coulomb's circular cone, static or kinetic."""

from __future__ import annotations

import math

from numba import njit

from .sets import SATURATED


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


@njit(cache=True)
def at_limit(p, mu):
    """A contact's friction impulse at the edge of its disc: P_n > 0 and |P_t| >= SATURATED mu P_n (``p``: its
    impulses (P_n, P_t1, P_t2), N s)."""
    return p[0] > 0.0 and p[1] * p[1] + p[2] * p[2] >= (SATURATED * mu * p[0]) ** 2


@njit(cache=True)
def normal_coupling(k, p, mu, sliding):
    """The change of a contact's normal rate per unit normal impulse (1/kg), as its normal Gauss-Seidel step
    should take it. K_nn alone, except for a sliding point whose friction is at the kinetic limit, P_t = mu P_n s
    (s the unit direction of P_t): its friction follows each change of P_n, so the rate changes by
    K_nn + mu (K_n1 s_1 + K_n2 s_2). Stepping with K_nn there, a thin card sliding down between two pads
    (friction at a 0.5 mm lever, normals at 10-40 mm) had each normal step undone by the friction step that
    followed, and the sweeps stalled (the gripper's card jerked upwards: the solve failed 18 ms into the lift;
    with this and ``contact.active_set``, 1.5 s ran). Kept to K_nn where that sum falls below a tenth of it
    (friction that nearly cancels or reverses the normal's own response: Painleve's indeterminate case)."""
    size = math.sqrt(p[1] * p[1] + p[2] * p[2])
    if not (sliding and size > 0.0 and at_limit(p, mu)):
        return k[0, 0]
    joined = k[0, 0] + mu * (k[0, 1] * p[1] + k[0, 2] * p[2]) / size
    return joined if joined >= 0.1 * k[0, 0] else k[0, 0]
