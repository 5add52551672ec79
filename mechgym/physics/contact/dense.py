"""Contact-space sweeps: the velocity solve of a contact set that the sweeps on the bodies are slow to converge.

A sweep of ``solve.contact_sweep`` applies every impulse to the bodies (and, with joints, to the equality rows'
shares of the joined response) and reads every rate back from them: a few microseconds per contact whatever
the sweep gains. A thin card squeezed between two pads on servoed slide joints needs hundreds of sweeps per
step (each gains a factor of about 0.75 near the solution), so there the sweeps move to contact space. For
the m touching contacts, with their rows r = 3 c + k (normal, two tangents), the matrix

    D[r, s] = J_r dv_s,    dv_s = W (J_s^T - G^T A^{-1} y_s)  (the joined response to a unit impulse along s),

is the change of row r's rate per unit impulse along row s; it is built once per step (the poses do not change while
the closing kick's iterates are solved) from the joined responses the solve already has. The sweeps then keep the
rows' rates u = u_0 + D (P - P_0) up to date with 3m multiply-adds per impulse change, make exactly the decisions of
``solve.contact_sweep`` (normal clamped at 0, static or kinetic friction by ``friction.friction_step``, sliding by
the same rule as ``solve.update_sliding``), and hand the bodies the change of the impulses once at the end. The
sweeps on the bodies then go on from there: they see a converged set and stop, or (with one-sided rows, which D
leaves out) finish the solve; a solve that ended at a direct solution (below) ends the velocity solve when the
constraint rows meet their tolerance (``solve._converge``). The set is one island of the touching contacts
(``contact.islands``); an island of more contacts than the scene's matrix holds (``sets.dense_contacts``) stays on
the bodies. After VELOCITY_DIRECT_EVERY sweeps without convergence (SMALL_DIRECT_EVERY on an island of at most
SMALL_ISLAND contacts in a scene with rows; then after 2, 4, ... times as many), the sticking points at their static
limit that still slip are declared sliding if their kinetic coefficient is their static one (the rule of
``solve.update_sliding``, which otherwise waits for the sweeps to converge: sweeps that creep at 2.5e-8 m/s per sweep
with two points of a squeezed card at the limit, slipping at 1e-6 m/s, never get there), and the set is solved
directly: by semismooth Newton on its Coulomb conditions (``contact.newton``), or failing that on the
equations of the active set the sweeps have found (``contact.active_set``). A solution found there ends the sweeps.
"""

from __future__ import annotations

import math

from ..constraints import rate_with
from ..jit import kernel
from ..tolerances import (
    DENSE_CONTACTS,
    MAX_SWEEPS,
    SLIP,
    VELOCITY_DIRECT_EVERY,
    VELOCITY_TOLERANCE,
)
from .active_set import direct_step
from .friction import at_limit, cone_mu, friction_step, normal_coupling
from .islands import sweeps_before_direct
from .newton import newton_solve
from .position import response_matrix


@kernel
def _add_column(matrix, rate, m, s, amount):
    """u += D[:, s] amount over the 3m rows (D is symmetric, ``position.response_matrix``: its row s, read
    contiguously)."""
    column = matrix[s, :3 * m]
    for r in range(column.size):
        rate[r] += column[r] * amount


@kernel(inline=True)
def _sweep(contacts, scratch, m):
    """One sweep of ``solve.contact_sweep`` in contact space; returns the largest |dP| K_kk (m/s)."""
    matrix, rate = scratch.dense, scratch.dense_rate
    worst = 0.0
    for c in range(m):
        i = scratch.dense_index[c]
        k = contacts.coupling[i]
        p = contacts.impulse[i]
        p_n = p[0]
        if k[0, 0] > 0.0:
            p_n = max(0.0, p[0] - rate[3 * c] / normal_coupling(k, p, contacts.friction[i], contacts.sliding[i]))
        d_n = p_n - p[0]
        if d_n != 0.0:
            _add_column(matrix, rate, m, 3 * c, d_n)
        limit = cone_mu(contacts, i) * p_n
        t1, t2 = friction_step(k, p[1], p[2], rate[3 * c + 1], rate[3 * c + 2], limit, contacts.sliding[i])
        d1, d2 = t1 - p[1], t2 - p[2]
        if d1 != 0.0:
            _add_column(matrix, rate, m, 3 * c + 1, d1)
        if d2 != 0.0:
            _add_column(matrix, rate, m, 3 * c + 2, d2)
        p[0], p[1], p[2] = p_n, t1, t2
        worst = max(worst, abs(d_n) * k[0, 0], abs(d1) * k[1, 1], abs(d2) * k[2, 2])
    return worst


@kernel
def _update_sliding(contacts, scratch, m, converged):
    """``solve.update_sliding`` on the contact-space rates: True if a sticking point at its static limit slips.
    Before the sweeps have ``converged``, only the points whose kinetic coefficient is their static one: for
    them sliding changes how the solve parametrises the friction (``active_set``), not the cone, while a point
    whose cone shrinks to mu_k < mu_s slides only if the converged solve has no static solution (a cube on a
    slope below its static angle, whose sweeps saturate one corner on the way, would slide)."""
    rate = scratch.dense_rate
    changed = False
    for c in range(m):
        i = scratch.dense_index[c]
        p = contacts.impulse[i]
        if (not contacts.sliding[i] and (converged or contacts.friction[i] >= contacts.static_friction[i])
                and at_limit(p, contacts.static_friction[i])
                and math.sqrt(rate[3 * c + 1] ** 2 + rate[3 * c + 2] ** 2) > SLIP):
            contacts.sliding[i] = True
            changed = True
    return changed


@kernel(inline=True)
def solve_dense(linkage, bodies, state, world, contacts, scratch, work, joined, lo, hi):
    """Sweeps in contact space, over the touching contacts ``scratch.island_members[lo:hi]`` (an island,
    ``contact.islands``), from the current impulses and body velocities until they converge (as
    ``solve._converge`` decides, without the rows' own sweeps). Builds D first unless ``scratch.dense_ready[0]``
    (``solve.begin_solve`` clears it when the poses or the touching set change). The bodies are not touched:
    the impulses the sweeps started from are left in ``scratch.dense_start`` (3m) and the touching contacts'
    indices in ``scratch.dense_index``, for the caller to apply the change (``solve._converge``). Returns m,
    -m if the sweeps did not converge (the impulses are left where they got to), or 0 for an island of more than
    DENSE_CONTACTS, or more than its matrix holds (``sets.dense_contacts``; nothing done)."""
    m = hi - lo
    if m > DENSE_CONTACTS or 3 * m > scratch.dense.shape[0]:
        return 0
    for c in range(m):
        scratch.dense_index[c] = scratch.island_members[lo + c]
    if not scratch.dense_ready[0]:
        response_matrix(linkage, bodies, state, world, contacts, scratch, work, joined, m, 3)
        scratch.dense_ready[0] = True
    for c in range(m):
        i = scratch.dense_index[c]
        for k in range(3):
            scratch.dense_rate[3 * c + k] = rate_with(contacts, scratch.spin, state, world, i, contacts.rows[i, k])
            scratch.dense_start[3 * c + k] = contacts.impulse[i, k]
    return sweep_contact_space(contacts, scratch, m, sweeps_before_direct(linkage.rows, m, VELOCITY_DIRECT_EVERY))


@kernel(inline=True)
def sweep_contact_space(contacts, scratch, m, every):
    """The sweeps of ``solve_dense`` on D (``scratch.dense``) and the rates u (``scratch.dense_rate``) of the m contacts
    ``scratch.dense_index`` from their impulses; after ``every`` sweeps, 2 ``every``, 4 ``every``, ... the set is solved
    directly (``_solve_directly``), and a solution found there ends the sweeps. Returns m, or -m if they did not
    converge in MAX_SWEEPS, unless in a part of h / 2**CONTACT_SUBDIVISION or shorter (``scratch.inexact``): there
    Newton's method makes its last tries and may end at its best inexact point (``newton.newton_solve``).
    ``scratch.dense_direct[0]``: the solve ended at a direct solution."""
    scratch.dense_direct[0] = False
    direct = every
    for sweep in range(MAX_SWEEPS):
        if _sweep(contacts, scratch, m) <= VELOCITY_TOLERANCE and not _update_sliding(contacts, scratch, m, True):
            return m
        if sweep + 1 == direct:
            _update_sliding(contacts, scratch, m, False)
            if _solve_directly(contacts, scratch, m):
                scratch.dense_direct[0] = True
                return m
            direct *= 2
    if scratch.inexact[0] and newton_solve(contacts, scratch, m, True):  # (on the cones of the current flags)
        scratch.dense_direct[0] = True
        return m
    return -m


@kernel
def _solve_directly(contacts, scratch, m):
    """The Coulomb conditions of the set solved by Newton's method (``contact.newton``), or failing that by the
    direct step on the sweeps' active set (``contact.active_set``), until a solution has no sticking point that
    slips at its static limit (``_update_sliding``; each that does slides from then on, so at most m + 1 solves).
    Returns True with that solution taken. The sweeps do not confirm it: at a solution whose rates meet the
    Coulomb conditions to 1e-13 m/s a sweep still changes a rate by about 1e-12 m/s (a sliding point's
    normal step is divided by its joined coupling, which can be a tenth of K_nn), and from there the sweeps of
    a set they cannot converge drift away again (measured on random sets: 1.7e-12 m/s in the first sweep,
    5e-2 m/s fifty sweeps later)."""
    while newton_solve(contacts, scratch, m, False) or direct_step(contacts, scratch, m):
        if not _update_sliding(contacts, scratch, m, True):
            return True
    return False
