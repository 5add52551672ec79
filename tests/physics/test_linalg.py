"""The engine's small dense solvers (``physics.linalg``): the ridge-shifted Cholesky factor and the LU against
numpy, the semidefinite Cholesky against constructed dependent rows, and the linear complementarity problem of a
positive semidefinite matrix against constructed solutions, on random matrices of the ranks that coplanar
contacts give (four corners of a face, three motions)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechgym.physics.linalg import (
    cholesky_solve,
    lu_factor,
    lu_solve,
    proximal_lcp,
    ridge_cholesky,
    semidefinite_cholesky,
)
from mechgym.physics.tolerances import DEPENDENT, POSITION_TOLERANCE, PUSHING_GAP, SLOW_GAP


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


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 16), st.integers(0, 6), st.integers(0, 4))
def test_the_semidefinite_cholesky_marks_dependent_rows_and_solves_the_others(seed, independent, repeated, marked):
    """Rows of G G^T, at any scale, with some rows combinations of others, in random order, and some rows marked on
    entry holding garbage: the factor ignores the marked rows, marks exactly the dependent ones and
    solves a consistent system with 0 at every marked row."""
    rng = np.random.default_rng(seed)
    gradient = rng.normal(size=(independent, independent + 2)) * 10.0 ** rng.uniform(-3, 3)
    # each extra row a repeat of one row, or the sum or difference of two (a redundant joint, a closed loop)
    combinations = np.zeros((repeated, independent))
    for row in combinations:
        picked = rng.choice(independent, size=min(independent, int(rng.integers(1, 3))), replace=False)
        row[picked] = rng.choice([-1.0, 1.0], size=picked.size)
    rows = rng.permutation(np.vstack([gradient, combinations @ gradient]))
    a = rows @ rows.T
    n = a.shape[0] + marked
    keep = np.sort(rng.permutation(n)[:a.shape[0]])
    matrix, dependent = rng.normal(size=(n, n)), np.ones(n, dtype=np.bool_)
    matrix[np.ix_(keep, keep)], dependent[keep] = a, False
    factor, rhs = matrix.copy(), np.zeros(n)
    rhs[keep] = a @ rng.normal(size=keep.size)
    assert semidefinite_cholesky(factor, n, dependent) == independent == n - dependent.sum()
    x = np.where(dependent, 0.0, rhs)
    cholesky_solve(factor, n, x)
    assert np.all(x[dependent] == 0.0)
    scale = np.abs(a).max() * np.abs(x).max() if a.size else 0.0
    assert np.abs(a @ x[keep] - rhs[keep]).max(initial=0.0) <= 1e-9 * scale


def test_an_indefinite_matrix_has_no_factor():
    factor = np.array([[1.0, 2.0], [2.0, 1.0]])
    assert not ridge_cholesky(factor, 2, 0.0)


def _lcp(a, q, start, tolerance=None, open_slack=None):
    """``proximal_lcp`` from ``start``; ``open_slack`` defaults to the tolerance."""
    n = q.size
    z = start.copy()
    tolerance = 1e-13 * np.abs(q).max() if tolerance is None else tolerance
    iterations = proximal_lcp(a, n, q, z, np.zeros(n, dtype=np.int64), np.zeros((3, n)), np.zeros((n, n)),
                              np.zeros((2, n), dtype=np.int64), tolerance,
                              tolerance if open_slack is None else open_slack)
    return iterations, z


def _complementarity(a, q, z):
    """The largest violation of z >= 0, w = a z + q >= 0, z w = 0 (in the units of w, z scaled by a_ii)."""
    w = a @ z + q
    return max(np.max(-z * np.diag(a), initial=0.0), np.max(-w, initial=0.0),
               np.max(np.minimum(z * np.diag(a), np.abs(w)), initial=0.0))


def _constructed_problem(seed: int, n: int, rank: int):
    """a positive semidefinite of the given rank, eigenvalues down to 10^-8 of the largest (the squeezed card's
    slowest mode), q = w* - a z* for complementary z*, w* >= 0 (so a solution exists; with a singular a, w is
    unique and z only up to a's null space); and a random start."""
    a = _psd(seed, n, rank, 8.0)
    rng = np.random.default_rng(seed + 3)
    pushing = rng.random(n) < 0.5
    z_star = np.where(pushing, rng.random(n), 0.0)
    w_star = np.where(pushing, 0.0, rng.random(n) * 100.0)
    return a, w_star - a @ z_star, z_star, w_star, rng.random(n)


def _assert_solved_to_round_off(a, q, z_star, w_star, start):
    """From ``start`` the proximal iteration meets complementarity to DEPENDENT (the elimination's threshold for a
    dependent equation, relative to the block's largest entry) of the larger of |q| and |a| |z*|: a free set's
    dependent equations are met only to about that, the others to round-off. And its w is w*, to what that
    complementarity implies: with d = z - z*, a d = w - w* and, a being positive semidefinite,
    |(a d)_i| <= sqrt(a_ii d.a.d) where d.a.d = z.w - z.w* - z*.w (z*.w* = 0) is at most the violations
    |z.w| + z*.max(-w, 0) + max(-z, 0).w*."""
    tolerance = DEPENDENT * max(np.abs(q).max(), np.abs(a).max() * z_star.max())
    iterations, z = _lcp(a, q, start, tolerance)
    assert iterations > 0
    assert _complementarity(a, q, z) <= 2 * tolerance
    w = a @ z + q
    violations = abs(z @ w) + z_star @ np.maximum(-w, 0.0) + np.maximum(-z, 0.0) @ w_star
    assert np.all(np.abs(w - w_star) <= np.sqrt(np.diag(a) * violations) + 2 * tolerance)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 24), st.data())
def test_a_solvable_semidefinite_complementarity_problem_is_solved_to_round_off(seed, n, data):
    """``_constructed_problem`` of any rank, from zero or from a random start (``_assert_solved_to_round_off``)."""
    a, q, z_star, w_star, start = _constructed_problem(seed, n, data.draw(st.integers(1, n)))
    _assert_solved_to_round_off(a, q, z_star, w_star, np.zeros(n) if data.draw(st.booleans()) else start)


@pytest.mark.parametrize("seed, n, rank", [(163042, 10, 6), (30, 17, 9)])
def test_the_problems_hypothesis_found_are_solved(seed, n, rank):
    """Cases hypothesis found against tighter bounds, from zero and from the random start. (163042, 10, 6):
    |a| |z*| = 161 against |q| = 102, the free set's equations met only to 1.2e-11 from the random start, and the
    w of the solution from zero 3e-9 off w* (z - z* ~ 0.3 along a near-null direction of the free block that a's
    other rows see). (30, 17, 9): from the random start a dependent member's equation is left 1.4e-11 open, the
    problem's |a| |z*| being 111: 1.2e-13 of it, above a tolerance of 1e-13; dropping that member makes another
    z negative, and the iteration ran out."""
    a, q, z_star, w_star, start = _constructed_problem(seed, n, rank)
    for begin in (np.zeros(n), start):
        _assert_solved_to_round_off(a, q, z_star, w_star, begin)


def test_the_pinched_cards_position_correction_is_solved():
    """The Gripper's position correction that failed at t = 2.016 s of seed 0's random servo targets (dt 2 ms):
    12 contacts (the card on the table, against the right fixture and the right pad), D of rank 6, the
    multipliers that the failed correction's 10^5 sweeps left as the start. Solved to 1e-13 m of complementarity
    from that start; the old direct step, which corrected the pushing set one contact at a time from a
    minimum-norm solve, did not converge on it."""
    with np.load(Path(__file__).parent / "contact" / "data" / "card_pinched_against_its_fixture.npz") as data:
        a, q, start = data["matrix"], data["gap"], data["start"]
    assert np.linalg.matrix_rank(a, tol=1e-9 * np.abs(a).max()) == 6
    assert _complementarity(a, q, start) > 1e-10  # where 10^5 sweeps left it (measured 4.5e-10 m: above SLOW_GAP)
    iterations, z = _lcp(a, q, start)
    assert iterations > 0
    assert _complementarity(a, q, z) <= 1e-13


def test_a_pad_pressing_the_card_into_the_table_is_corrected_to_the_slow_gap():
    """The Gripper's position correction that failed at t = 1.428 s of seed 0's random servo targets after the
    scripted pinch (dt 2 ms): 12 contacts (the card on the table, a pad's face 2.46 mm into the card's edge), D of
    rank 6, the multipliers that the failed correction's 10^5 sweeps left as the start. The free set's equations
    are met only to about 5e-13 m there, above POSITION_TOLERANCE (1e-13 m), so the direct step after
    POSITION_SLOW_SWEEPS aims at SLOW_GAP (``contact.position``), as the sweeps' own test does: from that start it
    meets complementarity to SLOW_GAP."""
    with np.load(Path(__file__).parent / "contact" / "data" / "card_pressed_into_the_table_by_a_pad.npz") as data:
        a, q, start = data["matrix"], data["gap"], data["start"]
    assert np.linalg.matrix_rank(a, tol=1e-9 * np.abs(a).max()) == 6
    assert _complementarity(a, q, start) > SLOW_GAP
    iterations, z = _lcp(a, q, start, SLOW_GAP)
    assert iterations > 0
    assert _complementarity(a, q, z) <= SLOW_GAP


def test_a_pad_on_the_edge_of_a_wedged_card_is_corrected_by_dropping_the_equation_the_others_leave_unmet():
    """Seed 9 of the random servo targets at dt = 5 ms, t = 2.065 s: a pad driven down at 1.7 m/s with its face
    5.5 mm into the top edge of the card, which stands tilted on the table between the fixtures; 12 contacts, D
    of rank 6, the multipliers of the correction's first 50 sweeps as the start. The free set the proximal
    iteration finds holds a dependent equation that the others leave 3.7e-11 m open (w_i > 0 while it pushes),
    and kept it there for every iteration: 10^5 sweeps and 2000 direct steps did not converge, and the step
    failed. Dropping that member (``linalg.proximal_lcp``) solves the problem to round-off in one iteration."""
    with np.load(Path(__file__).parent / "contact" / "data" / "pad_on_the_edge_of_a_wedged_card.npz") as data:
        a, q, start = data["matrix"], data["gap"], data["start"]
    assert np.linalg.matrix_rank(a, tol=1e-9 * np.abs(a).max()) == 6
    assert _complementarity(a, q, start) > SLOW_GAP
    iterations, z = _lcp(a, q, start)
    assert iterations == 1
    assert _complementarity(a, q, z) <= 1e-13 * np.abs(q).max()


def test_a_pad_on_the_edge_of_a_card_wedged_between_the_fixtures_is_corrected_with_its_pushing_gaps_open():
    """Seed 4 of the random servo targets at dt = 5 ms, t = 2.205 s: a pad 4.5 mm into the top edge of the card,
    which touches the table and both fixtures; 12 contacts, D of rank 6, the multipliers of the correction's
    first 50 sweeps as the start. Its pushing contacts' dependent equations can be met together only to about
    2e-11 m: complementarity to SLOW_GAP (1e-11 m) is out of reach from either start, and the correction failed
    after 10^5 sweeps. Letting a pushing gap end up to PUSHING_GAP open (a tenth of TOUCH: it still touches),
    the direct step's first try leaves no penetration beyond round-off."""
    path = Path(__file__).parent / "contact" / "data" / "pad_on_the_edge_of_a_card_wedged_between_the_fixtures.npz"
    with np.load(path) as data:
        a, q, start = data["matrix"], data["gap"], data["start"]
    assert np.linalg.matrix_rank(a, tol=1e-9 * np.abs(a).max()) == 6
    assert _lcp(a, q, start, SLOW_GAP)[0] < 0 and _lcp(a, q, np.zeros_like(start), SLOW_GAP)[0] < 0
    iterations, z = _lcp(a, q, start, POSITION_TOLERANCE, PUSHING_GAP)
    assert iterations > 0
    w = a @ z + q
    assert z.min() >= 0.0 and w.min() >= -1e-15
    assert np.all(w[z > 0] <= PUSHING_GAP)


def test_a_pad_deep_in_the_cards_edge_is_corrected_from_zero_where_the_sweeps_start_fails():
    """Seed 14 of the same random servo targets, t = 1.738 s: a pad's face 5.0 mm into the card's edge, the card
    on the table, 12 contacts, D of rank 6. From the multipliers of the correction's first 50 sweeps the proximal
    iterations run out at SLOW_GAP; from zero they meet it, which is why the direct step starts again from zero
    (``contact.position._direct_step``)."""
    with np.load(Path(__file__).parent / "contact" / "data" / "pad_deep_in_the_cards_edge.npz") as data:
        a, q, start = data["matrix"], data["gap"], data["start"]
    assert np.linalg.matrix_rank(a, tol=1e-9 * np.abs(a).max()) == 6
    assert _lcp(a, q, start, SLOW_GAP)[0] < 0
    iterations, z = _lcp(a, q, np.zeros_like(start), SLOW_GAP)
    assert iterations > 0
    assert _complementarity(a, q, z) <= SLOW_GAP


def test_the_lu_solves_mixed_scales_and_consistent_dependent_rows():
    rng, n = np.random.default_rng(11), 8
    scales = 10.0 ** rng.uniform(-6, 7, n)  # couplings from 1/(kg m^2) of a heavy table to a light bead's
    pivot, pivot_column, diagonal = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64), np.zeros(n)
    gradient = rng.normal(size=(n, n)) * np.sqrt(scales)[:, None]
    matrix = gradient @ gradient.T + 0.1 * np.diag(scales)
    factored, rhs = matrix.copy(), rng.normal(size=n) * np.sqrt(scales)
    assert lu_factor(factored, n, pivot, pivot_column, diagonal) == n
    x = rhs.copy()
    lu_solve(factored, n, n, pivot, pivot_column, x)
    np.testing.assert_allclose(matrix @ x, rhs, rtol=1e-10, atol=0)
    # Rows 5-7 repeat rows 0-2 (a redundant joint): rank 5, and a consistent right-hand side is still met.
    gradient = rng.normal(size=(5, 6))
    gradient = np.vstack([gradient, gradient[:3]])
    matrix = gradient @ gradient.T
    rhs = matrix @ rng.normal(size=n)
    factored = matrix.copy()
    rank = lu_factor(factored, n, pivot, pivot_column, diagonal)
    assert rank == 5
    x = rhs.copy()
    lu_solve(factored, n, rank, pivot, pivot_column, x)
    np.testing.assert_allclose(matrix @ x, rhs, rtol=0, atol=1e-12 * np.max(np.abs(rhs)))


def test_the_lu_solves_a_block_sparse_system_whose_blocks_share_nothing():
    # K of rows on bodies that share none is block diagonal: the elimination skips the zero multipliers.
    rng = np.random.default_rng(12)
    blocks = [rng.normal(size=(3, 3)) for _ in range(3)]
    matrix = np.zeros((9, 9))
    for k, block in enumerate(blocks):
        matrix[3 * k:3 * k + 3, 3 * k:3 * k + 3] = block @ block.T + np.eye(3) * 10.0 ** (3 * k - 3)
    n = 9
    pivot, pivot_column, diagonal = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64), np.zeros(n)
    rhs = rng.normal(size=n)
    factored, x = matrix.copy(), rhs.copy()
    assert lu_factor(factored, n, pivot, pivot_column, diagonal) == n
    lu_solve(factored, n, n, pivot, pivot_column, x)
    np.testing.assert_allclose(x, np.linalg.solve(matrix, rhs), rtol=1e-12, atol=0)
