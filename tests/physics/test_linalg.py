"""The small dense solver of the contact stages (``physics.linalg``): the ridge-shifted Cholesky factor against
numpy, and the minimum-norm solution of consistent singular systems against the pseudo-inverse, on random
positive semidefinite matrices of the ranks that coplanar contacts give (four corners of a face, three motions)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mechgym.physics.linalg import cholesky_solve, min_norm_solve, ridge_cholesky


def _psd(seed: int, n: int, rank: int, spread: float) -> np.ndarray:
    """A random n x n positive semidefinite matrix of the given rank, eigenvalues from 1 down to 10^-spread."""
    rng = np.random.default_rng(seed)
    basis, _ = np.linalg.qr(rng.normal(size=(n, n)))
    values = np.zeros(n)
    values[:rank] = np.logspace(0, -spread, rank) * 400.0
    return (basis * values) @ basis.T


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 24))
def test_the_cholesky_factor_solves_the_shifted_system_to_round_off(seed, n):
    a = _psd(seed, n, n, 3.0) + 1e-3 * np.eye(n)
    b = np.random.default_rng(seed + 1).normal(size=n)
    factor = a.copy()
    assert ridge_cholesky(factor, n, 0.5)
    x = b.copy()
    cholesky_solve(factor, n, x)
    expected = np.linalg.solve(a + 0.5 * np.eye(n), b)
    assert np.abs(x - expected).max() <= 1e-12 * np.abs(expected).max()


def test_an_indefinite_matrix_has_no_factor():
    factor = np.array([[1.0, 2.0], [2.0, 1.0]])
    assert not ridge_cholesky(factor, 2, 0.0)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 24), st.data())
def test_a_consistent_singular_system_gets_its_minimum_norm_solution(seed, n, data):
    """b in the range of a (the rates of some motion), eigenvalues down to 10^-8 of the largest (the squeezed
    card's slowest mode): the result meets the equations to round-off and has no part in a's null space beyond
    b's rounding divided by the ridge (about 1e-16 / RIDGE = 1e-7 of |x| per iteration), which makes it the
    pseudo-inverse's solution to 1e-5 (the weakest modes' part is fixed only to the accuracy at which their
    residual is seen)."""
    rank = data.draw(st.integers(1, n))
    a = _psd(seed, n, rank, 8.0)
    values, vectors = np.linalg.eigh(a)
    in_range = vectors[:, values >= 1e-12 * values.max()]
    b = a @ (in_range @ np.random.default_rng(seed + 2).normal(size=in_range.shape[1]))
    x, factor, residual = np.zeros(n), np.zeros((n, n)), np.zeros(n)
    assert min_norm_solve(a, factor, n, b, x, residual)
    assert np.abs(a @ x - b).max() <= 1e-12 * np.abs(b).max()
    null = vectors[:, values < 1e-12 * values.max()]
    assert np.abs(null.T @ x).max(initial=0.0) <= 1e-5 * np.abs(x).max()
    expected = np.linalg.pinv(a, rcond=1e-11, hermitian=True) @ b
    assert np.abs(x - expected).max() <= 1e-5 * np.abs(expected).max()
