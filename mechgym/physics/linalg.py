"""The engine's small dense linear algebra: Cholesky factorisations (ridge-shifted, and semidefinite with dependent
rows marked), Gaussian elimination with full pivoting, an LU factorisation with partial pivoting that skips
dependent columns, and the linear complementarity problem of a symmetric positive semidefinite matrix (proximal
point iterations, each a positive definite problem solved by principal pivoting)."""

from __future__ import annotations

import math

import numpy as np

from .jit import kernel
from .tolerances import DEPENDENT, MAX_PIVOTS, PROXIMAL_ITERATIONS, PROXIMAL_RIDGE

_MAGNITUDE = np.int64(0x7FFF_FFFF_FFFF_FFFF)  # a double's bits but its sign
_INFINITY = np.int64(0x7FF0_0000_0000_0000)  # +inf's bits: any magnitude above is a NaN


@kernel
def ridge_cholesky(a, n, ridge):
    """In place: a[:n, :n] <- L, the lower Cholesky factor of a + ridge I (a symmetric; its upper triangle is
    left as it was), its diagonal stored as the reciprocals 1 / L_jj (``cholesky_solve`` multiplies where it would
    divide). Returns False if a pivot is not positive (a + ridge I is not positive definite)."""
    for j in range(n):
        total = a[j, j] + ridge
        for k in range(j):
            total -= a[j, k] * a[j, k]
        if not total > 0.0:
            return False
        a[j, j] = 1.0 / math.sqrt(total)
        for i in range(j + 1, n):
            value = a[i, j]
            for k in range(j):
                value -= a[i, k] * a[j, k]
            a[i, j] = value * a[j, j]
    return True


@kernel
def semidefinite_cholesky(a, n, dependent):
    """In place: the lower triangle of a[:n, :n] (symmetric positive semidefinite over the rows not marked in
    dependent[:n] on entry) <- L, L L^T = a over those rows, its diagonal stored as the reciprocals 1 / L_ii (as
    ``ridge_cholesky``'s). A row whose pivot falls to DEPENDENT times their largest diagonal entry or below depends
    on the earlier ones and is marked too. The rows and columns of L at the marked rows are the identity's, so
    that ``cholesky_solve`` of a right-hand side that is 0 at the marked rows gives 0 there (a dependent row's
    multiplier, exact when the equations are consistent) and the solution of the others. Returns the number of
    rows not marked.

    L[i, j] = (a[i, j] - sum_{k<j} L[i, k] L[j, k]) / L[j, j];  L[i, i] = sqrt(a[i, i] - sum_{k<i} L[i, k]^2)."""
    scale = 0.0
    for i in range(n):
        if not dependent[i]:
            scale = max(scale, a[i, i])
    independent = 0
    for i in range(n):
        if not dependent[i]:
            for j in range(i):
                total = 0.0
                if not dependent[j]:
                    total = a[i, j]
                    for k in range(j):
                        total -= a[i, k] * a[j, k]
                    total *= a[j, j]
                a[i, j] = total
            total = a[i, i]
            for k in range(i):
                total -= a[i, k] * a[i, k]
            if total > DEPENDENT * scale:
                a[i, i] = 1.0 / math.sqrt(total)
                independent += 1
                continue
            dependent[i] = True
        for k in range(i):
            a[i, k] = 0.0
        a[i, i] = 1.0
    return independent


@kernel
def cholesky_solve(factor, n, b):
    """In place: b[:n] <- (L L^T)^-1 b for the factor L of ``ridge_cholesky`` or ``semidefinite_cholesky``
    (its diagonal stored as reciprocals). Both substitutions go by columns of the solved unknowns (each unknown,
    once known, is taken off the equations still to solve), so that the updates are independent of each other
    where a dot product per row would chain its multiply-adds; the backward one reads rows of L, contiguously."""
    for i in range(n):  # forward: L z = b; an unknown that is 0 updates nothing
        value = b[i] * factor[i, i]
        b[i] = value
        if value != 0.0:
            for k in range(i + 1, n):
                b[k] -= factor[k, i] * value
    for i in range(n - 1, -1, -1):  # backward: L^T x = z
        value = b[i] * factor[i, i]
        b[i] = value
        row = factor[i, :i]  # (a 1-D view: vectorized, see ``eliminate``)
        for k in range(i):
            b[k] -= row[k] * value


@kernel(inline=True)
def _magnitude_bits(row):
    """The largest |row[j]| of a 1-D int64 view of doubles, as the bits of that double, NaNs counted as 0. The
    bits of a non-negative double (its sign bit cleared) order as the doubles do, and NaNs lie above +inf's: an
    integer maximum, which LLVM vectorizes (a float maximum with NaN semantics it does not: five times slower)."""
    best = 0
    for j in range(row.size):
        bits = row[j] & _MAGNITUDE
        best = max(best, bits if bits <= _INFINITY else 0)
    return best


@kernel
def eliminate(a, b, n, order, x):
    """x[:n] solving a[:n, :n] x = b[:n] by Gaussian elimination with full pivoting; the unknowns of dependent
    equations (pivot below DEPENDENT times the largest |a|) are 0. Returns the rank. a and b are overwritten: each
    pivot's row and column are swapped into place (rows and columns stay contiguous for the elimination's inner
    loop), and ``order`` ((n,) int64 scratch) keeps which unknown each column holds.

    The pivot is the first largest |a_ij| of the remaining block in row-major order. Each row's largest
    magnitude there is kept (``_magnitude_bits``, in x's memory until the back substitution) and updated as the
    row is eliminated, so that a step searches the rows' maxima and then one row, not the whole block. The inner
    loops run over 1-D views of the rows, which LLVM vectorizes (over 2-D indices from a column other than 0
    it does not: two and a half times slower at n = 384)."""
    bits, row_best = a.view(np.int64), x.view(np.int64)
    scale = 0.0
    for i in range(n):
        order[i] = i
        for j in range(n):
            scale = max(scale, abs(a[i, j]))
        row_best[i] = _magnitude_bits(bits[i, :n])
    rank = n
    for k in range(n):
        bi, most = k, 0
        for i in range(k, n):
            if row_best[i] > most:
                bi, most = i, row_best[i]
        best = abs(a[bi, k])
        bj = k
        for j in range(k, n):
            if bits[bi, j] & _MAGNITUDE == most:
                best, bj = abs(a[bi, j]), j
                break
        if most == 0 or not best > DEPENDENT * scale:
            rank = k
            break
        if bi != k:
            for j in range(n):
                a[k, j], a[bi, j] = a[bi, j], a[k, j]
            b[k], b[bi] = b[bi], b[k]
            row_best[bi] = row_best[k]
        if bj != k:
            for i in range(n):
                a[i, k], a[i, bj] = a[i, bj], a[i, k]
            order[k], order[bj] = order[bj], order[k]
        pivot, pivot_row = a[k, k], a[k, k + 1:n]
        for i in range(k + 1, n):
            factor = a[i, k] / pivot
            if factor != 0.0:
                row = a[i, k + 1:n]
                for j in range(row.size):
                    row[j] -= factor * pivot_row[j]
                b[i] -= factor * b[k]
            row_best[i] = _magnitude_bits(bits[i, k + 1:n])
    for i in range(n):
        x[i] = 0.0
    for k in range(rank - 1, -1, -1):
        total = b[k]
        for j in range(k + 1, rank):
            total -= a[k, j] * x[order[j]]
        x[order[k]] = total / a[k, k]
    return rank


@kernel
def lu_factor(matrix, n, pivot, pivot_column, diagonal):
    """LU-factor matrix[:n, :n] in place by Gaussian elimination with partial pivoting, skipping dependent
    columns, and return the rank k. Column j is dependent when, after eliminating the previous pivots, no
    remaining entry of it exceeds DEPENDENT times its own diagonal entry |A_jj| (scale-free: the rows of one
    scene couple from 1/(kg m^2) to 1/kg, many decades apart); its unknown is then left at 0
    (``lu_solve``), which loses nothing when the system is consistent. ``diagonal`` (n,): scratch.

    Step s (s < k) swapped row s with row pivot[s] (whole rows, so P A = L U with P all swaps applied in
    order) and pivoted on column pivot_column[s]: U[s, c] = matrix[s, c] for the pivot columns c after it,
    and L[i, s] = matrix[i, pivot_column[s]] for i > s (unit diagonal)."""
    for i in range(n):
        diagonal[i] = abs(matrix[i, i])
    rank = 0
    for col in range(n):
        if rank == n:
            break
        best = rank
        for row in range(rank + 1, n):
            if abs(matrix[row, col]) > abs(matrix[best, col]):
                best = row
        if not abs(matrix[best, col]) > DEPENDENT * diagonal[col]:
            continue
        if best != rank:
            for k in range(n):
                matrix[rank, k], matrix[best, k] = matrix[best, k], matrix[rank, k]
        pivot[rank], pivot_column[rank] = best, col
        pivot_row = matrix[rank, col + 1:n]
        for row in range(rank + 1, n):
            multiplier = matrix[row, col] / matrix[rank, col]
            matrix[row, col] = multiplier
            if multiplier == 0.0:  # (rows of bodies that share none with the pivot's: K is block sparse)
                continue
            target = matrix[row, col + 1:n]  # (1-D views: vectorized, see ``eliminate``)
            for k in range(target.size):
                target[k] -= multiplier * pivot_row[k]
        rank += 1
    return rank


@kernel
def lu_solve(matrix, n, rank, pivot, pivot_column, rhs):
    """Overwrite rhs[:n] with x solving A x = rhs, from ``lu_factor``'s LU of A = matrix[:n, :n] of rank
    ``rank``. The unknowns of dependent columns are 0; the last n - rank equations (consistency) are unused."""
    for s in range(rank):  # rhs <- P rhs
        rhs[s], rhs[pivot[s]] = rhs[pivot[s]], rhs[s]
    for row in range(1, n):  # forward: L y = P rhs, row by row (the same operations in the same order as by columns)
        total = rhs[row]
        for s in range(min(row, rank)):
            total -= matrix[row, pivot_column[s]] * rhs[s]
        rhs[row] = total
    for s in range(rank - 1, -1, -1):  # back: U x = y over the pivot columns; y[s] becomes x[pivot_column[s]]
        total = rhs[s]
        for t in range(s + 1, rank):
            total -= matrix[s, pivot_column[t]] * rhs[t]
        rhs[s] = total / matrix[s, pivot_column[s]]
    for s in range(rank, n):
        rhs[s] = 0.0
    # Move x[pivot_column[s]] from slot s to slot pivot_column[s] >= s, from the last step down: the slot
    # written is never one still to be read (pivot columns increase with s).
    for s in range(rank - 1, -1, -1):
        value = rhs[s]
        rhs[s] = 0.0
        rhs[pivot_column[s]] = value


@kernel
def principal_pivoting(a, n, ridge, q, member, z, factor, index, tolerance):
    """The linear complementarity problem z >= 0, w = (a + ridge I) z + q >= 0, z . w = 0 over a[:n, :n] symmetric
    positive semidefinite and ridge > 0 (a positive definite matrix: the solution exists and is unique), by
    Murty's least-index principal pivoting from the basic set ``member`` (n,) int64 (1: z_i free, w_i = 0;
    0: z_i = 0): solve the members' equations, then the first index that breaks its sign
    (a member's z_i below -tolerance / (a_ii + ridge), another's w_i below -tolerance) changes sides, until none
    does. For a positive definite matrix the least-index rule cannot cycle (Murty 1974), from any start.
    ``factor`` (n, n), ``index`` (n,) int64: scratch. Returns the pivots made, or -1 after MAX_PIVOTS or a
    failed factorisation."""
    for pivots in range(MAX_PIVOTS):
        m = 0
        for i in range(n):
            if member[i]:
                index[m] = i
                m += 1
        for e in range(m):
            z[e] = -q[index[e]]
            for f in range(m):
                factor[e, f] = a[index[e], index[f]]
        if not ridge_cholesky(factor, m, ridge):
            return -1
        cholesky_solve(factor, m, z)
        for e in range(m - 1, -1, -1):  # z[index[e]] <- the e-th solution (index[e] >= e: from the top down)
            value = z[e]
            z[e] = 0.0
            z[index[e]] = value
        for i in range(n):
            if not member[i]:
                z[i] = 0.0
        broken = -1
        for i in range(n):
            if member[i]:
                if z[i] * (a[i, i] + ridge) < -tolerance:
                    broken = i
                    break
            else:
                value = q[i]  # w_i
                for e in range(m):
                    value += a[i, index[e]] * z[index[e]]
                if value < -tolerance:
                    broken = i
                    break
        if broken < 0:
            return pivots
        member[broken] = 1 - member[broken]
    return -1


@kernel
def proximal_lcp(a, n, q, z, member, vectors, factor, indices, tolerance, open_slack):
    """z[:n] >= 0 with w = a z + q >= 0 and z . w = 0, a[:n, :n] symmetric positive semidefinite (singular where
    rows depend on each other), from z on entry. The proximal point iteration z_{k+1} = LCP(a + eps I, q - eps z_k),
    eps = PROXIMAL_RIDGE max a_ii, each problem positive definite and solved exactly by ``principal_pivoting``
    from the set where z_k > 0, finds which z_i are free; it converges to a solution when one exists, but along an
    eigenvalue sigma of the free set's block only by eps / (sigma + eps) per iteration. So after each iteration the
    free set's own equations (a z + q)_i = 0 are solved for the change from z_{k+1} (``_free_set_trial``), and that
    point is taken when it meets complementarity (``_complementary``): z_i a_ii >= -tolerance, w_i >= -tolerance,
    and w_i <= ``open_slack`` where z_i > 0 (the units of w). Where the free set's equations depend on each other
    and cannot all be met (a pad's four points on the card's edge, with the card held by the table and its
    fixture: 12 contacts, D of rank 6), the ridge keeps z_i > 0 on an equation the others leave unmet, w_i > 0,
    and the iteration would stay there; the member with the largest w_i above ``open_slack`` then leaves the set
    (z_i = 0) and the rest is solved again, at most once per member. ``member`` (n,) int64,
    ``vectors`` (3, n), ``factor`` (n, n), ``indices`` (2, n) int64: scratch. Returns the iterations used, or -1
    if they ran out (no solution: the problem is infeasible) or a pivoting failed."""
    shifted, trial, change = vectors[0], vectors[1], vectors[2]
    free = indices[1]
    scale = 0.0
    for i in range(n):
        scale = max(scale, a[i, i])
    ridge = PROXIMAL_RIDGE * scale
    for iteration in range(PROXIMAL_ITERATIONS):
        for i in range(n):
            shifted[i] = q[i] - ridge * z[i]
            member[i] = 1 if z[i] > 0.0 else 0
        if principal_pivoting(a, n, ridge, shifted, member, z, factor, indices[0], tolerance) < 0:
            return -1
        m = 0
        for i in range(n):
            if member[i]:
                free[m] = i
                m += 1
        for _ in range(m + 1):
            _free_set_trial(a, n, q, z, free, m, factor, shifted, indices[0], change, trial)
            if _complementary(a, n, q, trial, tolerance, open_slack):
                for i in range(n):
                    z[i] = trial[i]
                return iteration + 1
            drop, largest = -1, open_slack
            for e in range(m):
                rate = _rate(a, n, q, trial, free[e])
                if rate > largest:
                    drop, largest = e, rate
            if drop < 0:
                break
            m -= 1
            free[drop] = free[m]
    return -1


@kernel
def _free_set_trial(a, n, q, z, free, m, factor, rhs, order, change, trial):
    """trial = z on the set free[:m] plus the change that solves the set's equations (a trial + q)_i = 0 there
    (``eliminate``: the unknowns of dependent equations keep their value), 0 off the set. ``factor``, ``rhs``,
    ``order``, ``change``: scratch."""
    for e in range(m):
        r = free[e]
        value = q[r]
        for f in range(m):
            value += a[r, free[f]] * z[free[f]]
        rhs[e] = -value
        for f in range(m):
            factor[e, f] = a[r, free[f]]
    eliminate(factor, rhs, m, order, change)
    for i in range(n):
        trial[i] = 0.0
    for e in range(m):
        trial[free[e]] = z[free[e]] + change[e]


@kernel
def _rate(a, n, q, z, i):
    """w_i = (a z + q)_i."""
    w = q[i]
    for j in range(n):
        w += a[i, j] * z[j]
    return w


@kernel
def _complementary(a, n, q, z, tolerance, open_slack):
    """z >= 0 and w = a z + q >= 0 to ``tolerance`` (w's units, z_i scaled by a_ii), and w_i <= ``open_slack``
    where z_i > 0."""
    for i in range(n):
        w = _rate(a, n, q, z, i)
        if z[i] * a[i, i] < -tolerance or w < -tolerance or (z[i] > 0.0 and w > open_slack):
            return False
    return True
