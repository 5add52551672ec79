"""Small dense linear algebra for the contact solves: a ridge-shifted Cholesky factorisation and the minimum-norm
solution of a consistent symmetric positive semidefinite system by iterated Tikhonov regularisation."""

from __future__ import annotations

import math

from numba import njit

# The ridge of the iterated regularisation, relative to the largest diagonal entry. A mode of eigenvalue
# sigma gains a factor ridge / (sigma + ridge) per iteration; the squeezed card's slowest mode has
# sigma = 1e-8 of the diagonal: 0.1 per iteration.
RIDGE = 1e-9
MIN_NORM_ITERATIONS = 40  # refinements at most (about 16 take the slowest mode above to round-off)
ROUND_OFF = 1e-15  # a residual below this times max |b| is met: further refinements only gather b's rounding


@njit(cache=True)
def ridge_cholesky(a, n, ridge):
    """In place: a[:n, :n] <- L, the lower Cholesky factor of a + ridge I (a symmetric; its upper triangle is
    left as it was). Returns False if a pivot is not positive (a + ridge I is not positive definite)."""
    for j in range(n):
        total = a[j, j] + ridge
        for k in range(j):
            total -= a[j, k] * a[j, k]
        if not total > 0.0:
            return False
        a[j, j] = math.sqrt(total)
        for i in range(j + 1, n):
            value = a[i, j]
            for k in range(j):
                value -= a[i, k] * a[j, k]
            a[i, j] = value / a[j, j]
    return True


@njit(cache=True)
def cholesky_solve(factor, n, b):
    """In place: b[:n] <- (L L^T)^-1 b for the factor L of ``ridge_cholesky``."""
    for i in range(n):
        value = b[i]
        for k in range(i):
            value -= factor[i, k] * b[k]
        b[i] = value / factor[i, i]
    for i in range(n - 1, -1, -1):
        value = b[i]
        for k in range(i + 1, n):
            value -= factor[k, i] * b[k]
        b[i] = value / factor[i, i]


@njit(cache=True)
def min_norm_solve(a, factor, n, b, x, residual):
    """x[:n] <- the minimum-norm solution of a x = b (a[:n, :n] symmetric positive semidefinite, the system
    consistent) by iterated Tikhonov regularisation: x_0 = 0, x_{k+1} = x_k + (a + eps I)^-1 (b - a x_k), eps =
    RIDGE max a_ii, which converges to it from x_0 = 0 (no iterate leaves the range of a but by b's rounding over
    eps), stopping when max |b - a x| is below ROUND_OFF max |b| or an iteration no longer lowers it. ``factor``
    (n, n) and ``residual`` (n,): scratch. Returns False if the factorisation fails."""
    scale, size = 0.0, 0.0
    for i in range(n):
        x[i] = 0.0
        scale = max(scale, a[i, i])
        size = max(size, abs(b[i]))
        for j in range(n):
            factor[i, j] = a[i, j]
    if n == 0:
        return True
    if not ridge_cholesky(factor, n, RIDGE * scale):
        return False
    best = math.inf
    for _ in range(MIN_NORM_ITERATIONS):
        worst = 0.0
        for i in range(n):
            value = b[i]
            for j in range(n):
                value -= a[i, j] * x[j]
            residual[i] = value
            worst = max(worst, abs(value))
        if not worst < best or worst <= ROUND_OFF * size:
            break
        best = worst
        cholesky_solve(factor, n, residual)
        for i in range(n):
            x[i] += residual[i]
    return True
