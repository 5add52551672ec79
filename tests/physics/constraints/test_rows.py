"""Row values and gradients against their definitions: g from the poses directly, and the 12-number
gradient against central differences of g under moves of each body's centre and small world rotations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mechgym.physics import constraints as rattle
from mechgym.physics.state import State
from mechgym.physics.vectors import quat_mul, rotate

from .helpers import make_bodies

RNG = np.random.default_rng(7)


def random_unit(count=1):
    v = RNG.normal(size=(count, 3))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def random_state():
    state = State.zeros(1, 2)
    state.com[0] = RNG.normal(size=(2, 3))
    quat = RNG.normal(size=(2, 4))
    state.quat[0] = quat / np.linalg.norm(quat, axis=1, keepdims=True)
    return state


def world_vector(state, body, local):
    if body < 0:
        return np.asarray(local, dtype=float)
    out = np.zeros(3)
    rotate(state.quat[0, body], np.asarray(local, dtype=float), out)
    return out


def direct_value(rows, state):
    """g written straight from the row definitions in the module docstring."""
    a, b, kind = rows.body_a[0], rows.body_b[0], rows.kind[0]

    def point(body, local):
        return world_vector(state, body, local) + (state.com[0, body] if body >= 0 else 0.0)

    d = point(b, rows.anchor_b[0]) - point(a, rows.anchor_a[0])
    u = world_vector(state, b, rows.axis_b[0])
    if kind == rattle.POINT:
        return world_vector(state, a, rows.axis_a[0]) @ d - rows.offset[0]
    if kind == rattle.DISTANCE:
        return np.linalg.norm(d) - rows.offset[0]
    w = world_vector(state, a, rows.axis_a[0])
    if kind == rattle.ALIGN:
        return u @ w - rows.offset[0]
    zero = world_vector(state, a, rows.ref_a[0])
    return math.atan2(u @ np.cross(w, zero), u @ zero) - rows.offset[0]


def make_row(kind, a, b):
    axis = random_unit()[0]
    ref = np.cross(axis, random_unit()[0])
    ref /= np.linalg.norm(ref)
    u = (axis if kind == rattle.ALIGN else ref) if b < 0 else random_unit()[0]
    return rattle.make_rows(kind, a, b, anchor_a=RNG.normal(size=3), anchor_b=RNG.normal(size=3), axis_a=axis,
                            axis_b=u, ref_a=ref, offset=RNG.normal())


@pytest.mark.parametrize("kind", [rattle.POINT, rattle.ALIGN, rattle.DISTANCE, rattle.ANGLE])
@pytest.mark.parametrize(("a", "b"), [(0, 1), (rattle.WORLD, 1), (0, rattle.WORLD)])
def test_value_and_gradient_match_the_definition(kind, a, b):
    for _ in range(5):
        rows, state = make_row(kind, a, b), random_state()
        grad = np.zeros(12)
        value = rattle.evaluate_row(rows, 0, state, 0, grad)
        assert value == pytest.approx(direct_value(rows, state), abs=1e-12)
        step = 1e-6
        numeric = np.zeros(12)
        for side, body in ((0, a), (1, b)):
            if body < 0:
                continue
            for i in range(3):
                for sign in (1.0, -1.0):
                    moved = state.copy()
                    moved.com[0, body, i] += sign * step
                    numeric[6 * side + i] += sign * direct_value(rows, moved) / (2 * step)
                    moved = state.copy()
                    half = 0.5 * sign * step
                    turn = np.array([math.cos(half), 0.0, 0.0, 0.0])
                    turn[1 + i] = math.sin(half)
                    quat_mul(turn, state.quat[0, body], moved.quat[0, body])  # world-frame rotation
                    numeric[6 * side + 3 + i] += sign * direct_value(rows, moved) / (2 * step)
        np.testing.assert_allclose(grad, numeric, atol=1e-8)


def test_impulse_and_coupling_follow_the_inverse_mass_matrix():
    """An impulse P along G changes G v by P G W G^T (W = diag(1/m, R diag(1/I) R^T) per body)."""
    bodies = make_bodies([1.3, 0.7], [[0.2, 0.3, 0.5], [0.1, 0.15, 0.05]])
    rows, state = make_row(rattle.POINT, 0, 1), random_state()
    state.vel[0] = RNG.normal(size=(2, 3))
    state.momentum[0] = RNG.normal(size=(2, 3))
    spin, grad = np.zeros((2, 6)), np.zeros(12)
    rattle.evaluate_row(rows, 0, state, 0, grad)
    before = rattle.row_rate(rows, bodies, state, 0, 0, grad, np.zeros(3))
    rattle.apply_impulse(bodies, state, 0, 0, 1, grad, 0.37)
    after = rattle.row_rate(rows, bodies, state, 0, 0, grad, np.zeros(3))
    rattle.take_spins(bodies, state.quat[0], spin)
    k = rattle.coupling(bodies, spin, 0, 1, grad, grad)
    assert after - before == pytest.approx(0.37 * k, rel=1e-12)
    # W computed independently from rotation matrices.
    expected = 0.0
    for body, column in ((0, 0), (1, 6)):
        w, x, y, z = state.quat[0, body]
        r = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                      [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                      [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
        inv_world = r @ np.diag(bodies.inv_inertia[body]) @ r.T
        lin, ang = grad[column:column + 3], grad[column + 3:column + 6]
        expected += lin @ lin / bodies.mass[body] + ang @ inv_world @ ang
    assert k == pytest.approx(expected, rel=1e-12)
