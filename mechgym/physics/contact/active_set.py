"""A direct step of the contact-space solve (``contact.dense``): the touching contacts' equations on the active
set the sweeps have found, solved exactly.

Projected Gauss-Seidel can stall on sets whose contacts undo each other's steps: a thin card sliding between
two pads, where one point's normal step turns the card and the kinetic friction of the point beside it turns it
back, sweep after sweep, at a fixed 8e-10 m/s. Once the sweeps have found which contacts push, stick or slide,
the solution is that of a linear system: with u the rows' rates, D the contact-space matrix and dP the change
of the impulses,

    u_r + (D dP)_r = 0   for the normal of every pushing contact and both tangents of every sticking one,

where a sliding point at its kinetic limit keeps its friction direction s, dP_t = mu_k s dP_n, so its normal is
its only unknown (its column D_n + mu_k (s_1 D_t1 + s_2 D_t2)). Contacts that do not push keep zero impulse.
The system is solved by Gaussian elimination with full pivoting; a pivot below DEPENDENT times the largest
entry marks an equation that depends on the others (four coplanar corners of a face: their normals span three
motions) and its unknown is kept at 0 (exact when the equations are consistent, which the check confirms). The
step is taken only if the result is a solution: no pushing impulse below 0, every sticking point inside its
static cone, every sliding point still slipping against its friction, no contact that does not push
approaching, and every equation met to CONSISTENT. Otherwise nothing changes and the sweeps go on.
"""

from __future__ import annotations

import math

from numba import njit

from .friction import at_limit

DEPENDENT = 1e-12  # relative pivot size below which an equation counts as dependent
CONSISTENT = 1e-12  # m/s: largest equation residual of an accepted step
OPEN, SLIDE, STICK = 0, 1, 2


@njit(cache=True)
def _eliminate(a, b, n, rows, cols, x):
    """x[:n] solving a[:n, :n] x = b[:n] by Gaussian elimination with full pivoting (a and b are overwritten;
    rows, cols: (n,) int64 scratch); the unknowns of dependent equations (pivot below DEPENDENT times the largest
    |a|) are 0. Returns the rank."""
    scale = 0.0
    for i in range(n):
        rows[i] = i
        cols[i] = i
        x[i] = 0.0
        for j in range(n):
            scale = max(scale, abs(a[i, j]))
    rank = n
    for k in range(n):
        best, bi, bj = 0.0, k, k
        for i in range(k, n):
            for j in range(k, n):
                if abs(a[rows[i], cols[j]]) > best:
                    best, bi, bj = abs(a[rows[i], cols[j]]), i, j
        if not best > DEPENDENT * scale:
            rank = k
            break
        rows[k], rows[bi] = rows[bi], rows[k]
        cols[k], cols[bj] = cols[bj], cols[k]
        pivot = a[rows[k], cols[k]]
        for i in range(k + 1, n):
            factor = a[rows[i], cols[k]] / pivot
            if factor == 0.0:
                continue
            for j in range(k + 1, n):
                a[rows[i], cols[j]] -= factor * a[rows[k], cols[j]]
            b[rows[i]] -= factor * b[rows[k]]
    for k in range(rank - 1, -1, -1):
        total = b[rows[k]]
        for j in range(k + 1, rank):
            total -= a[rows[k], cols[j]] * x[cols[j]]
        x[cols[k]] = total / a[rows[k], cols[k]]
    return rank


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
def _column(contacts, scratch, r, x):
    """The system's entry for equation row r and unknown x (a row of D): D[r, x], or for a sliding point's
    normal D[r, x] + mu_k (s_1 D[r, x + 1] + s_2 D[r, x + 2])."""
    matrix = scratch.dense
    c = x // 3
    if scratch.kinds[c] != SLIDE:
        return matrix[r, x]
    s = scratch.directions[c]
    mu = contacts.friction[scratch.dense_index[c]]
    return matrix[r, x] + mu * (s[0] * matrix[r, x + 1] + s[1] * matrix[r, x + 2])


@njit(cache=True)
def direct_step(contacts, scratch, m):
    """Solve the touching contacts' equations on the active set the sweeps have found (module docstring), and
    take the result if it is a solution: the impulses (``contacts.impulse``) and the rows' rates
    (``scratch.dense_rate``) are then updated. A candidate in which a pushing contact would pull (P_n < 0) or
    separate (its equation depended on the others and is not met: the pushing set is too large) drops the worst
    such contact from the pushing set and is solved again, up to m times.
    Returns True if a step was taken."""
    _classify(contacts, scratch, m)
    impulse, rate = scratch.system_vectors[2], scratch.system_vectors[3]
    for _ in range(m):
        n = _unknowns(scratch, m)
        if n == 0:
            return False
        _solve_candidate(contacts, scratch, m, n)
        worst, drop = CONSISTENT, -1
        for c in range(m):
            if scratch.kinds[c] == OPEN:
                continue
            excess = max(-impulse[3 * c] * contacts.coupling[scratch.dense_index[c], 0, 0], rate[3 * c])
            if excess > worst:
                worst, drop = excess, c
        if drop < 0:
            break
        scratch.kinds[drop] = OPEN
    if not _is_solution(contacts, scratch, m, impulse, rate):
        return False
    for c in range(m):
        p = contacts.impulse[scratch.dense_index[c]]
        for k in range(3):
            p[k] = impulse[3 * c + k]
            scratch.dense_rate[3 * c + k] = rate[3 * c + k]
    return True


@njit(cache=True)
def _solve_candidate(contacts, scratch, m, n):
    """The candidate impulses and rates (``scratch.system_vectors[2]``, ``[3]``, 3m each) of the n unknowns of
    the current parts: the system assembled and eliminated; open contacts at zero impulse."""
    system, unknowns = scratch.system, scratch.unknowns
    rhs, delta, impulse, rate = (scratch.system_vectors[0], scratch.system_vectors[1], scratch.system_vectors[2],
                                 scratch.system_vectors[3])
    for c in range(m):  # the candidate's starting point: the sweeps' impulses, open contacts at 0
        p = contacts.impulse[scratch.dense_index[c]]
        for k in range(3):
            impulse[3 * c + k] = p[k] if scratch.kinds[c] != OPEN else 0.0
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
    _eliminate(system, rhs, n, scratch.pivots[0], scratch.pivots[1], delta)
    for r in range(3 * m):
        rhs[r] = 0.0  # (now the impulses' change)
    for f in range(n):
        x = unknowns[f]
        rhs[x] = delta[f]
        c = x // 3
        if scratch.kinds[c] == SLIDE:
            mu = contacts.friction[scratch.dense_index[c]]
            rhs[x + 1] = mu * delta[f] * scratch.directions[c, 0]
            rhs[x + 2] = mu * delta[f] * scratch.directions[c, 1]
    for r in range(3 * m):
        total = rate[r]
        for s in range(3 * m):
            total += scratch.dense[r, s] * rhs[s]
        rate[r] = total
    for r in range(3 * m):
        impulse[r] += rhs[r]


@njit(cache=True)
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
            mu = contacts.friction[i] if contacts.sliding[i] else contacts.static_friction[i]
            if (t1 * t1 + t2 * t2 > (mu * p_n) ** 2
                    or abs(rate[3 * c + 1]) > CONSISTENT or abs(rate[3 * c + 2]) > CONSISTENT):
                return False
        elif rate[3 * c + 1] * scratch.directions[c, 0] + rate[3 * c + 2] * scratch.directions[c, 1] > 0.0:
            return False  # a sliding point's friction must oppose its slip
    return True
