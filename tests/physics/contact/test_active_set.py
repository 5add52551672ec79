"""The elimination behind the contact solve's direct step (``contact.active_set``): exact on regular systems,
and on the dependent systems of coplanar contacts (four corners of a face: four normals, three motions) a
solution that meets every equation when they are consistent."""

from __future__ import annotations

import numpy as np

from mechgym.physics.linalg import eliminate


def _solve(a, b):
    n = b.size
    x, order = np.zeros(n), np.zeros(n, dtype=np.int64)
    rank = eliminate(a.copy(), b.copy(), n, order, x)
    return rank, x


def test_a_regular_system_is_solved_to_round_off():
    rng = np.random.default_rng(3)
    a = rng.normal(size=(12, 12)) + 12 * np.eye(12)
    b = rng.normal(size=12)
    rank, x = _solve(a, b)
    assert rank == 12
    assert np.abs(x - np.linalg.solve(a, b)).max() < 1e-13


def test_the_four_corners_of_a_face_give_a_consistent_solution_with_one_unknown_at_zero():
    """A face's four corners (y, z) = (+-a, +-b) pushing a body free to move along the normal and to turn about
    the two in-plane axes: J = [1, z, -y] per corner, D = J M^-1 J^T has rank 3. Any rates J v are consistent;
    the solution meets all four equations, with the dependent corner's impulse at 0."""
    corners = np.array([[0.01, 0.04], [-0.01, 0.04], [-0.01, 0.0085], [0.01, 0.0085]])
    jacobian = np.column_stack([np.ones(4), corners[:, 1], -corners[:, 0]])
    inverse_mass = np.diag([100.0, 1.0 / 5.3e-6, 1.0 / 3.0e-6])
    d = jacobian @ inverse_mass @ jacobian.T
    rates = jacobian @ np.array([0.02, -0.3, 0.7])  # the rates of some motion
    rank, x = _solve(d, -rates)
    assert rank == 3
    assert np.abs(d @ x + rates).max() < 1e-12 * np.abs(rates).max()
    assert np.count_nonzero(x == 0.0) == 1
