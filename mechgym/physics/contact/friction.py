"""One contact's friction update in the projected Gauss-Seidel sweeps (``contact.solve``, ``contact.dense``):
Coulomb's circular cone, static or kinetic."""

from __future__ import annotations

import math

from ..jit import kernel
from ..tolerances import DISC_ITERATIONS, DISC_TOLERANCE, SATURATED, SINGULAR_BLOCK


@kernel
def disc(t1, t2, limit):
    """Radial projection of the tangential impulse (t1, t2) (N s) onto the disc |t| <= limit."""
    size = math.sqrt(t1 * t1 + t2 * t2)
    if size <= limit:
        return t1, t2
    return t1 * limit / size, t2 * limit / size


@kernel
def friction_step(k, p1, p2, v1, v2, limit, sliding):
    """The tangential impulses (N s) after one Gauss-Seidel step of a contact's friction, from (p1, p2) at the
    slip (v1, v2) (m/s) with the coupling ``k`` (3 x 3) and the disc radius ``limit`` (mu p_n, the static
    or, for a sliding point, the kinetic disc): the exact minimiser over the disc |t| <= limit of the tangent
    block's quadratic 1/2 t.B t + g.t, B = K_tt, g = v_t - B p_t (``disc_minimiser``). Inside the disc it stops
    the slip exactly; on its edge the slip after the step is antiparallel to t (maximal dissipation), which for a
    sliding point is kinetic friction mu_k p_n against the slip. An exact block minimisation lowers the quadratic
    by at least as much as any step in the block, so the sweeps converge where a projected gradient step cycles
    (a card squeezed between two servoed pads while it slides on its fixture, mu = 1). A tangent the joints
    block (zero coupling, ``contact.joined``) takes no impulse; with one left, the exact 1-D step -v / k clamped
    to [-limit, limit]."""
    if k[1, 1] > 0.0 and k[2, 2] > 0.0:
        b12 = 0.5 * (k[1, 2] + k[2, 1])
        g1 = v1 - k[1, 1] * p1 - b12 * p2
        g2 = v2 - b12 * p1 - k[2, 2] * p2
        return disc_minimiser(k[1, 1], b12, k[2, 2], g1, g2, limit)
    t1 = p1 - v1 / k[1, 1] if k[1, 1] > 0.0 else 0.0
    t2 = p2 - v2 / k[2, 2] if k[2, 2] > 0.0 else 0.0
    return disc(t1, t2, limit)


@kernel
def disc_minimiser(b11, b12, b22, g1, g2, limit):
    """argmin of 1/2 t.B t + g.t over |t| <= limit, B = [[b11, b12], [b12, b22]] positive semidefinite with a
    positive diagonal. Inside the disc it is -B^-1 g; otherwise t(lam) = -(B + lam I)^-1 g with lam > 0 the root
    of the secular equation 1/|t(lam)| = 1/limit (More and Sorensen's trust-region subproblem), found by Newton's
    method, which converges monotonically (the function is concave and increasing in lam), its steps positive,
    from any lam below the root: here from lam = max(0, |g| / limit - e_max), e_max the larger eigenvalue of B,
    since |t(lam)| >= |g| / (lam + e_max) puts the root at or above it (at it for an isotropic B). A singular B
    (det B below SINGULAR_BLOCK b11 b22: the joints block one tangent direction) takes no impulse along its null
    direction (as in ``friction_step``): the exact 1-D step along the other, clamped to the disc."""
    if not limit > 0.0:
        return 0.0, 0.0
    det = b11 * b22 - b12 * b12
    if not det > SINGULAR_BLOCK * b11 * b22:
        return _blocked_minimiser(b11, b12, b22, g1, g2, limit)
    t1 = -(b22 * g1 - b12 * g2) / det
    t2 = -(b11 * g2 - b12 * g1) / det
    if t1 * t1 + t2 * t2 <= limit * limit:
        return t1, t2
    e_max = 0.5 * (b11 + b22) + math.sqrt(0.25 * (b11 - b22) ** 2 + b12 * b12)
    e_min = b11 + b22 - e_max
    lam = max(0.0, math.sqrt(g1 * g1 + g2 * g2) / limit - e_max)
    for _ in range(DISC_ITERATIONS):
        # t = -(B + lam I)^-1 g, and dt/dlam = -(B + lam I)^-1 t
        a11, a22 = b11 + lam, b22 + lam
        d = a11 * a22 - b12 * b12
        t1 = -(a22 * g1 - b12 * g2) / d
        t2 = -(a11 * g2 - b12 * g1) / d
        s1 = -(a22 * t1 - b12 * t2) / d
        s2 = -(a11 * t2 - b12 * t1) / d
        size = math.sqrt(t1 * t1 + t2 * t2)
        # phi(lam) = 1/|t| - 1/limit, phi' = -(t . dt/dlam) / |t|^3
        step = (1.0 / size - 1.0 / limit) * size ** 3 / (t1 * s1 + t2 * s2)
        lam += step
        # from below the root every exact step is positive: one at or under the tolerance is round-off
        if step <= DISC_TOLERANCE * (lam + e_min):
            break
    size = math.sqrt(t1 * t1 + t2 * t2)
    return t1 * limit / size, t2 * limit / size


@kernel
def _blocked_minimiser(b11, b12, b22, g1, g2, limit):
    """``disc_minimiser`` for a singular B: along its unit eigenvector q of the eigenvalue e = b11 + b22 (the
    other is 0), t = clamp(-q.g / e, -limit, limit) q."""
    e = b11 + b22
    angle = 0.5 * math.atan2(b12, 0.5 * (b11 - b22))
    c, s = math.cos(angle), math.sin(angle)
    amount = min(limit, max(-limit, -(c * g1 + s * g2) / e))
    return amount * c, amount * s


@kernel
def cone_mu(contacts, i):
    """The friction coefficient of contact i's cone: kinetic (mu_k) if it slides, else static (mu_s)."""
    return contacts.friction[i] if contacts.sliding[i] else contacts.static_friction[i]


@kernel
def at_limit(p, mu):
    """A contact's friction impulse at the edge of its disc: P_n > 0 and |P_t| >= SATURATED mu P_n (``p``: its
    impulses (P_n, P_t1, P_t2), N s)."""
    return p[0] > 0.0 and p[1] * p[1] + p[2] * p[2] >= (SATURATED * mu * p[0]) ** 2


@kernel
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
