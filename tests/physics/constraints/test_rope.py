"""Ropes are one-sided distance rows: a taut rope carries the tension of the closed form, a slack one none."""

from __future__ import annotations

import math

import numpy as np

import mechgym
from mechgym.physics import constraints as rattle
from mechgym.physics.state import State

from .helpers import FORCE, GRAVITY, make_bodies, run, sphere

MASS = 1.5  # kg
LENGTH = 1.0  # m


def rope(length=LENGTH):
    """A 1.5 kg ball (radius 2 cm) hanging from the world origin on a rope: |d| - L <= 0."""
    bodies = make_bodies(*sphere(MASS, 0.02))
    rows = rattle.make_rows(rattle.DISTANCE, rattle.WORLD, 0, offset=length, sense=rattle.UPPER)
    return bodies, rows, State.zeros(1, 1)


def conical_pendulum(theta: float) -> tuple[str, float]:
    """MJCF of the ball on a rope (a limited spatial tendon from a world site to the ball's centre) in steady
    circular motion at cone angle theta: omega^2 = g / (L cos theta); returns (xml, omega)."""
    radius = LENGTH * math.sin(theta)
    omega = math.sqrt(GRAVITY / (LENGTH * math.cos(theta)))
    xml = f"""<mujoco><option gravity="0 0 -{GRAVITY}"><flag contact="disable"/></option><worldbody>
      <site name="anchor"/>
      <body name="ball"><freejoint/><geom size="0.02" mass="{MASS}"/><site name="knot"/></body></worldbody>
      <tendon><spatial name="rope" limited="true" range="0 {LENGTH}"><site site="anchor"/><site site="knot"/>
      </spatial></tendon>
      <keyframe><key qpos="{radius} 0 {-LENGTH * math.cos(theta)} 1 0 0 0" qvel="0 {omega * radius} 0 0 0 0"/>
      </keyframe></mujoco>"""
    return xml, omega


def test_conical_pendulum_tension_is_m_g_over_cos_theta():
    """Through ``mechgym.load``: the rope's reported tension (positive) is T = m g / cos theta at every step."""
    theta, h = 0.5, 1e-4
    xml, omega = conical_pendulum(theta)
    sim = mechgym.load(xml, backend="mechgym", dt=h)
    assert sim.constraint_forces()[("tendon", "rope")].tolist() == [0.0]  # no step yet
    tension = []
    for _ in range(int(math.ceil(2.0 * math.pi / omega / h))):  # one revolution
        sim.step(1)
        forces = sim.constraint_forces()
        assert list(forces) == [("tendon", "rope")]
        tension.append(forces[("tendon", "rope")][0])
    exact = MASS * GRAVITY / math.cos(theta)
    assert np.max(np.abs(np.array(tension) - exact)) <= 1e-6 * exact
    assert abs(np.linalg.norm(sim.body("ball").pos) - LENGTH) <= 1e-12


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
