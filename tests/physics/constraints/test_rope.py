"""Ropes are one-sided distance rows: a taut rope carries the tension of the closed form, a slack one none."""

from __future__ import annotations

import math

import numpy as np

from mechgym.physics import constraints as rattle
from mechgym.physics.state import State

from .helpers import FORCE, GRAVITY, RESIDUAL, make_bodies, run, sphere

MASS = 1.5  # kg
LENGTH = 1.0  # m


def rope(length=LENGTH):
    """A 1.5 kg ball (radius 2 cm) hanging from the world origin on a rope: |d| - L <= 0."""
    bodies = make_bodies(*sphere(MASS, 0.02))
    rows = rattle.make_rows(rattle.DISTANCE, rattle.WORLD, 0, offset=length, sense=rattle.UPPER)
    return bodies, rows, State.zeros(1, 1)


def test_conical_pendulum_tension_is_m_g_over_cos_theta():
    """Steady circular motion at cone angle theta: omega^2 = g / (L cos theta) and T = m g / cos theta."""
    theta, h = 0.5, 1e-4
    bodies, rows, state = rope()
    radius = LENGTH * math.sin(theta)
    omega = math.sqrt(GRAVITY / (LENGTH * math.cos(theta)))
    state.com[0, 0] = (radius, 0.0, -LENGTH * math.cos(theta))
    state.vel[0, 0] = (0.0, omega * radius, 0.0)
    n = int(math.ceil(2.0 * math.pi / omega / h))  # one revolution
    done, trace, _ = run(bodies, rows, state, h, n)
    assert done == n
    tension = -trace[:, FORCE]  # the row's force is along +d/|d| on the ball: a pull reports negative
    exact = MASS * GRAVITY / math.cos(theta)
    assert np.max(np.abs(tension - exact)) <= 1e-6 * exact
    assert np.max(np.abs(trace[:, RESIDUAL])) <= 1e-10
    # Still on the cone after a full revolution.
    assert abs(state.com[0, 0, 2] + LENGTH * math.cos(theta)) <= 1e-6


def test_a_slack_rope_carries_no_force_and_the_ball_falls_freely():
    h, n, drop = 1e-3, 250, 0.5
    bodies, rows, state = rope()
    state.com[0, 0] = (0.0, 0.0, -drop)  # 0.5 m below the anchor, inside the rope's reach until t = 0.319 s
    done, trace, work = run(bodies, rows, state, h, n)
    assert done == n
    assert np.all(trace[:, FORCE] == 0.0)
    assert np.all(work.impulse_position == 0.0) and np.all(work.impulse_velocity == 0.0)
    t = n * h
    assert abs(state.com[0, 0, 2] - (-drop - 0.5 * GRAVITY * t * t)) <= 1e-12
    assert abs(state.vel[0, 0, 2] + GRAVITY * t) <= 1e-12
