"""Velocity Verlet on free bodies: closed forms to round-off, exact force windows, exact time, exact restarts."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

import mechgym
from mechgym.scene import compile_model

from .scenes import free_body, key, quat_to_matrix, scene

GRAVITY = np.array([0.3, -0.4, -9.81])
# An asymmetric box whose centre of mass is off the body origin and whose principal axes are turned
# against the body frame, so that every frame conversion is exercised.
OFFSET_BOX = 'type="box" size="0.15 0.1 0.05" mass="1.3" pos="0.1 0.02 -0.03" euler="10 20 30"'
PUCK = free_body(geom='type="sphere" size="0.1" mass="1.5"')


def quat_mul(a, b):
    out = np.zeros(4)
    mujoco.mju_mulQuat(out, np.asarray(a, float), np.asarray(b, float))
    return out


def spinning_projectile():
    """Scene + closed form of a body thrown with spin about one principal axis under gravity.

    Torque-free rotation about a principal axis is a uniform rotation, and the centre of mass follows
    c(t) = c0 + v0 t + g t^2 / 2; the body origin is c - R_b(t) ipos and moves with v_c + w x (origin - c).
    """
    body = free_body(geom=OFFSET_BOX)
    option = f'gravity="{" ".join(map(str, GRAVITY))}"'
    model = compile_model(scene(body, option=option))
    iquat, ipos = model.body_iquat[1].copy(), model.body_ipos[1].copy()
    q_b0 = np.array([0.9, 0.1, 0.3, 0.2]) / np.linalg.norm([0.9, 0.1, 0.3, 0.2])
    axis, rate = 1, 2.7  # rad/s about the second principal axis
    omega_local = quat_to_matrix(iquat)[:, axis] * rate
    origin0, v_origin0 = np.array([0.3, -0.2, 1.1]), np.array([1.5, -0.7, 4.0])
    xml = scene(body, option=option, keyframe=key(np.r_[origin0, q_b0], np.r_[v_origin0, omega_local]))

    omega = quat_to_matrix(q_b0) @ omega_local
    com0 = origin0 + quat_to_matrix(q_b0) @ ipos
    v_com0 = v_origin0 + np.cross(omega, com0 - origin0)

    def exact(t):
        com = com0 + v_com0 * t + 0.5 * GRAVITY * t * t
        turn = np.zeros(4)
        mujoco.mju_axisAngle2Quat(turn, np.eye(3)[axis], rate * t)
        q_b = quat_mul(quat_mul(quat_mul(q_b0, iquat), turn), iquat * [1, -1, -1, -1])
        origin = com - quat_to_matrix(q_b) @ ipos
        return origin, q_b, v_com0 + GRAVITY * t + np.cross(omega, origin - com), omega

    return xml, exact


@pytest.mark.parametrize("dt", [1e-4, 1e-3, 0.01, 0.05])
def test_a_spinning_projectile_matches_the_closed_form_to_round_off(dt):
    xml, exact = spinning_projectile()
    sim = mechgym.load(xml, backend="mechgym", dt=dt)
    sim.step(round(0.5 / dt))
    pos, quat, linvel, angvel = exact(sim.time)
    state = sim.body("b")
    # Relative 1e-12: round-off of ~n additions (n <= 5000 here) stays well below it.
    np.testing.assert_allclose(state.pos, pos, rtol=0, atol=1e-12 * np.linalg.norm(pos))
    np.testing.assert_allclose(state.linvel, linvel, rtol=0, atol=1e-12 * np.linalg.norm(linvel))
    np.testing.assert_allclose(state.quat, quat, rtol=0, atol=1e-12)
    np.testing.assert_allclose(state.angvel, angvel, rtol=0, atol=1e-12 * np.linalg.norm(angvel))


@pytest.mark.parametrize("dt", [0.001, 0.003, 0.007, 0.3])
def test_a_timed_push_delivers_exactly_force_times_duration(dt):
    sim = mechgym.load(scene(PUCK, option='gravity="0 0 0"'), backend="mechgym", dt=dt)
    sim.apply_force("b", [3.0, 0.0, 0.0], start=0.0, stop=2.0)
    sim.step(round(2.5 / dt))
    # 3 N x 2 s / 1.5 kg, whether or not dt divides 2 s.
    assert abs(sim.body("b").linvel[0] - 4.0) <= 1e-12 * 4.0
    assert sim.body("b").linvel[1:].tolist() == [0.0, 0.0]


@pytest.mark.parametrize("dt", [0.001, 0.007, 0.3])
def test_a_window_inside_steps_delivers_force_and_torque_times_overlap(dt):
    sim = mechgym.load(scene(PUCK, option='gravity="0 0 0"'), backend="mechgym", dt=dt)
    force, torque = np.array([0.0, -2.5, 1.0]), np.array([0.2, 0.0, -0.1])
    sim.apply_force("b", force, torque, start=0.1234, stop=0.5678)
    sim.step(round(1.0 / dt))
    np.testing.assert_allclose(sim.body("b").linvel, force * 0.4444 / 1.5, rtol=0, atol=1e-13)
    np.testing.assert_allclose(sim.angular_momentum("b"), torque * 0.4444, rtol=0, atol=1e-14)
    inertia = 0.4 * 1.5 * 0.1**2  # solid sphere, so w = L / I
    np.testing.assert_allclose(sim.body("b").angvel, torque * 0.4444 / inertia, rtol=0, atol=1e-12)


def test_windows_act_at_the_centre_of_mass_and_expire():
    xml, _ = spinning_projectile()
    sim = mechgym.load(xml.replace('gravity="0.3 -0.4 -9.81"', 'gravity="0 0 0"'), backend="mechgym", dt=0.01)
    before = sim.angular_momentum("b")
    sim.apply_force("b", [5.0, -3.0, 2.0], start=0.0, stop=0.05)
    sim.step(10)
    # A force through the centre of mass leaves the angular momentum about it alone.
    np.testing.assert_allclose(sim.angular_momentum("b"), before, rtol=0, atol=1e-15)
    assert sim.get_state().windows == ()


def test_disabled_gravity_is_honoured():
    sim = mechgym.load(scene(PUCK, flags='gravity="disable"'), backend="mechgym", dt=0.01)
    sim.step(100)
    assert np.array_equal(sim.qpos, [0, 0, 0, 1, 0, 0, 0]) and sim.energy() == 0.0


def test_time_is_the_step_count_times_dt():
    sim = mechgym.load(scene(PUCK), backend="mechgym", dt=0.1)
    for _ in range(3):
        sim.step(7)
    assert sim.time == 21 * 0.1 and sim.step_count == 21


def test_get_state_and_set_state_continue_bit_for_bit():
    xml, _ = spinning_projectile()
    sim = mechgym.load(xml, backend="mechgym", dt=0.003)
    sim.apply_force("b", [1.0, 2.0, 3.0], [0.1, -0.2, 0.3], start=0.1, stop=0.4)
    sim.step(50)
    saved = sim.get_state()
    sim.step(77)
    expected = (sim.qpos, sim.qvel, sim.energy(), sim.time)
    sim.reset()
    sim.step(5)
    sim.set_state(saved)
    sim.step(77)
    got = (sim.qpos, sim.qvel, sim.energy(), sim.time)
    assert np.array_equal(got[0], expected[0]) and np.array_equal(got[1], expected[1])
    assert got[2:] == expected[2:]


def test_reset_returns_to_the_first_keyframe():
    xml, exact = spinning_projectile()
    sim = mechgym.load(xml, backend="mechgym", dt=0.01)
    start = sim.qpos, sim.qvel
    sim.apply_force("b", [1.0, 0.0, 0.0])
    sim.step(30)
    sim.reset()
    assert sim.time == 0.0 and sim.get_state().windows == ()
    assert np.array_equal(sim.qpos, start[0]) and np.array_equal(sim.qvel, start[1])
    np.testing.assert_allclose(sim.body("b").pos, exact(0.0)[0], rtol=0, atol=1e-15)
