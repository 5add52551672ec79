"""A direct step of the contact-space solve (``contact.dense``): the touching contacts' equations on the active
set the sweeps have found, solved exactly.

Projected Gauss-Seidel can stall on sets whose contacts undo each other's steps: a thin card sliding between
two pads, where one point's normal step turns the card and the kinetic friction of the point beside it turns it
back, sweep after sweep, at a fixed 8e-10 m/s. Once the sweeps have found which contacts push, stick or slide,
the solution is that of a linear system: with u the rows' rates, D the contact-space matrix and dP the change
of the impulses,

    u_r + (D dP)_r = 0   for the normal of every pushing contact and both tangents of every sticking one,

where a sliding point at its kinetic limit has the friction P_t = mu_k P_n s along a direction s, so its normal
is its only unknown (its column D_n + mu_k (s_1 D_t1 + s_2 D_t2)). Contacts that do not push keep zero impulse.
The system is solved by Gaussian elimination with full pivoting (``linalg.eliminate``); a pivot below
tolerances.DEPENDENT times the largest entry marks an equation that depends on the others (four coplanar corners of
a face: their normals span three motions) and its unknown is kept at 0 (exact when the equations are
consistent, which the check confirms).

The set is corrected until none of these happens: the pushing contact that would pull or separate most
opens; if there is none, every open contact that would approach joins (together: joined one at a time, a
point beside three coplanar pushing corners takes a negative impulse in the basic solution and opens again);
if none does, the sticking point whose friction lies furthest outside its cone goes to the cone's edge (the
split of friction among coplanar points is not unique, and the basic one may overload a point).
Then each sliding point's s is turned against the slip the solution gives it (a point whose slip the solution
drives along its friction sticks instead), and the system is solved again until the directions hold to
ALIGNED: the sweeps turn the friction of a point that slips slowly (1e-6 m/s under a 8e-4 N s impulse) by
about 1e-6 rad per sweep. The step is taken only if the result is a solution: no pushing impulse below 0,
every sticking point inside its static cone, every sliding point slipping against its friction, no contact
that does not push approaching, and every equation met to CONSISTENT. Otherwise nothing changes and the sweeps
go on.
"""

from __future__ import annotations

import math

from ..jit import kernel
from ..linalg import eliminate
from ..tolerances import ALIGNED, CONSISTENT, DIRECTION_ITERATIONS, SLIP
from .friction import at_limit, cone_mu

OPEN, SLIDE, STICK = 0, 1, 2


@kernel
def _classify(contacts, scratch, m):
    """Each touching contact's part in the system (OPEN, SLIDE, STICK) as the sweeps left it, into
    ``scratch.kinds``, and a sliding one's friction direction into ``scratch.directions``."""
    for c in range(m):
        i = scratch.dense_index[c]
        p = contacts.impulse[i]
        size = math.sqrt(p[1] * p[1] + p[2] * p[2])
        if not p[0] > 0.0:
            scratch.kinds[c] = OPEN
        elif contacts.sliding[i] and size > 0.0 and at_limit(p, contacts.friction[i]):
            scratch.kinds[c] = SLIDE
            scratch.directions[c, 0], scratch.directions[c, 1] = p[1] / size, p[2] / size
        else:
            scratch.kinds[c] = STICK


@kernel
def _unknowns(scratch, m):
    """The unknowns (rows of D) of the contacts' parts into ``scratch.unknowns``; returns their number."""
    n = 0
    for c in range(m):
        if scratch.kinds[c] == SLIDE:
            scratch.unknowns[n] = 3 * c
            n += 1
        elif scratch.kinds[c] == STICK:
            for k in range(3):
                scratch.unknowns[n] = 3 * c + k
                n += 1
    return n


@kernel
def _column(contacts, scratch, r, x):
    """The system's entry for equation row r and unknown x (a row of D): D[r, x], or for a sliding point's
    normal D[r, x] + mu_k (s_1 D[r, x + 1] + s_2 D[r, x + 2])."""
    matrix = scratch.dense
    c = x // 3
    if scratch.kinds[c] != SLIDE:
        return matrix[r, x]
    s = scratch.directions[c]
    mu = cone_mu(contacts, scratch.dense_index[c])
    return matrix[r, x] + mu * (s[0] * matrix[r, x + 1] + s[1] * matrix[r, x + 2])


@kernel
def direct_step(contacts, scratch, m):
    """Solve the touching contacts' equations on the active set the sweeps have found (module docstring), and
    take the result if it is a solution: the impulses (``contacts.impulse``) and the rows' rates
    (``scratch.dense_rate``) are then updated. The pushing set is corrected up to 2m times per solve and the
    sliding directions turned up to DIRECTION_ITERATIONS times (module docstring); a set still changing after
    that takes no step. Returns True if a step was taken."""
    _classify(contacts, scratch, m)
    impulse, rate = scratch.system_vectors[2], scratch.system_vectors[3]
    aligned = False
    for _ in range(DIRECTION_ITERATIONS):
        settled = False
        for _ in range(2 * m):
            n = _unknowns(scratch, m)
            if n == 0:
                return False
            _solve_candidate(contacts, scratch, m, n)
            worst, which = CONSISTENT, -1
            for c in range(m):
                if scratch.kinds[c] != OPEN:
                    excess = max(-impulse[3 * c] * contacts.coupling[scratch.dense_index[c], 0, 0], rate[3 * c])
                    if excess > worst:
                        worst, which = excess, c
            if which >= 0:
                scratch.kinds[which] = OPEN
                continue
            for c in range(m):
                if scratch.kinds[c] == OPEN and -rate[3 * c] > CONSISTENT:
                    _join(contacts, scratch, c, rate)
                    which = c
            if which < 0:
                which = _widest_stick(contacts, scratch, m, impulse)
            if which < 0:
                settled = True
                break
        if not settled:
            return False
        aligned = _turn_friction(scratch, m, rate)
        if aligned:
            break
    if not aligned or not _is_solution(contacts, scratch, m, impulse, rate):
        return False
    _take(contacts, scratch, m)
    return True


@kernel
def _take(contacts, scratch, m):
    """The candidate (``scratch.system_vectors[2]``, ``[3]``) becomes the contacts' impulses and rates."""
    impulse, rate = scratch.system_vectors[2], scratch.system_vectors[3]
    for c in range(m):
        p = contacts.impulse[scratch.dense_index[c]]
        for k in range(3):
            p[k] = impulse[3 * c + k]
            scratch.dense_rate[3 * c + k] = rate[3 * c + k]


@kernel
def _widest_stick(contacts, scratch, m, impulse):
    """The sticking contact whose candidate friction lies furthest outside its cone (|P_t| > mu P_n) goes to the
    cone's edge, P_t = mu P_n s along its friction s: among coplanar sticking points the split of the friction
    is not unique, and the elimination's basic split may load one point past its cone where another split would
    not. Returns it, or -1 if every sticking point is inside."""
    worst, which = 0.0, -1
    for c in range(m):
        if scratch.kinds[c] != STICK:
            continue
        p_n, t1, t2 = impulse[3 * c], impulse[3 * c + 1], impulse[3 * c + 2]
        size = math.sqrt(t1 * t1 + t2 * t2)
        excess = size - cone_mu(contacts, scratch.dense_index[c]) * p_n
        if excess > worst and size > 0.0:  # (a pushing point left at P_n = -0 with no friction: nothing to move)
            worst, which = excess, c
    if which >= 0:
        size = math.sqrt(impulse[3 * which + 1] ** 2 + impulse[3 * which + 2] ** 2)
        scratch.kinds[which] = SLIDE
        scratch.directions[which, 0] = impulse[3 * which + 1] / size
        scratch.directions[which, 1] = impulse[3 * which + 2] / size
    return which


@kernel
def _join(contacts, scratch, c, rate):
    """An open contact that the candidate drives into approach joins the pushing set: sliding against its slip
    (``rate``, 3m) if it slides and slips, else sticking."""
    v1, v2 = rate[3 * c + 1], rate[3 * c + 2]
    size = math.sqrt(v1 * v1 + v2 * v2)
    if contacts.sliding[scratch.dense_index[c]] and size > SLIP:
        scratch.kinds[c] = SLIDE
        scratch.directions[c, 0], scratch.directions[c, 1] = -v1 / size, -v2 / size
    else:
        scratch.kinds[c] = STICK


@kernel
def _turn_friction(scratch, m, rate):
    """Each sliding point's friction direction turned against the candidate's slip (``rate``, 3m), the
    direction the candidate should have had: returns True if every one was already within ALIGNED of it (or
    slips slower than SLIP, with no direction to follow). A sliding point whose slip the candidate drives along
    its friction (slip . s > 0) sticks instead."""
    aligned = True
    for c in range(m):
        if scratch.kinds[c] != SLIDE:
            continue
        v1, v2 = rate[3 * c + 1], rate[3 * c + 2]
        size = math.sqrt(v1 * v1 + v2 * v2)
        if size <= SLIP:  # (no slip to follow: a sliding point that the candidate brings to rest)
            continue
        s1, s2 = -v1 / size, -v2 / size
        if s1 * scratch.directions[c, 0] + s2 * scratch.directions[c, 1] < 0.0:
            scratch.kinds[c] = STICK
            aligned = False
        elif abs(s1 - scratch.directions[c, 0]) + abs(s2 - scratch.directions[c, 1]) > ALIGNED:
            scratch.directions[c, 0], scratch.directions[c, 1] = s1, s2
            aligned = False
    return aligned


@kernel
def _solve_candidate(contacts, scratch, m, n):
    """The candidate impulses and rates (``scratch.system_vectors[2]``, ``[3]``, 3m each) of the n unknowns of
    the current parts: the system assembled and eliminated; open contacts at zero impulse."""
    system, unknowns = scratch.system, scratch.unknowns
    rhs, delta, impulse, rate = (scratch.system_vectors[0], scratch.system_vectors[1], scratch.system_vectors[2],
                                 scratch.system_vectors[3])
    for c in range(m):  # the starting point: the sweeps' impulses, open contacts at 0, sliding ones on their cone
        p = contacts.impulse[scratch.dense_index[c]]
        for k in range(3):
            impulse[3 * c + k] = p[k] if scratch.kinds[c] != OPEN else 0.0
        if scratch.kinds[c] == SLIDE:
            mu = cone_mu(contacts, scratch.dense_index[c])
            impulse[3 * c + 1] = mu * p[0] * scratch.directions[c, 0]
            impulse[3 * c + 2] = mu * p[0] * scratch.directions[c, 1]
    for r in range(3 * m):  # the rates there
        total = scratch.dense_rate[r]
        for s in range(3 * m):
            total += scratch.dense[r, s] * (impulse[s] - contacts.impulse[scratch.dense_index[s // 3], s % 3])
        rate[r] = total
    for e in range(n):
        r = unknowns[e]
        rhs[e] = -rate[r]
        for f in range(n):
            system[e, f] = _column(contacts, scratch, r, unknowns[f])
    eliminate(system, rhs, n, scratch.pivots[0], delta)
    for r in range(3 * m):
        rhs[r] = 0.0  # (now the impulses' change)
    for f in range(n):
        x = unknowns[f]
        rhs[x] = delta[f]
        c = x // 3
        if scratch.kinds[c] == SLIDE:
            mu = cone_mu(contacts, scratch.dense_index[c])
            rhs[x + 1] = mu * delta[f] * scratch.directions[c, 0]
            rhs[x + 2] = mu * delta[f] * scratch.directions[c, 1]
    for r in range(3 * m):
        total = rate[r]
        for s in range(3 * m):
            total += scratch.dense[r, s] * rhs[s]
        rate[r] = total
    for r in range(3 * m):
        impulse[r] += rhs[r]


@kernel
def _is_solution(contacts, scratch, m, impulse, rate):
    """The candidate (impulse, rate) (3m each) is a solution on its active set (module docstring)."""
    for c in range(m):
        i = scratch.dense_index[c]
        kind = scratch.kinds[c]
        p_n, t1, t2 = impulse[3 * c], impulse[3 * c + 1], impulse[3 * c + 2]
        u_n = rate[3 * c]
        if kind == OPEN:
            if u_n < -CONSISTENT:
                return False
            continue
        if p_n < 0.0 or abs(u_n) > CONSISTENT:
            return False
        if kind == STICK:
            mu = cone_mu(contacts, i)
            if (t1 * t1 + t2 * t2 > (mu * p_n) ** 2
                    or abs(rate[3 * c + 1]) > CONSISTENT or abs(rate[3 * c + 2]) > CONSISTENT):
                return False
        elif rate[3 * c + 1] * scratch.directions[c, 0] + rate[3 * c + 2] * scratch.directions[c, 1] > 0.0:
            return False  # a sliding point's friction must oppose its slip
    return True
