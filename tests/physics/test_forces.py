"""Fluid, damping and actuator forces: MuJoCo's formulas exactly, and second order in time."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest

import mechgym
from mechgym.physics import State, build_model
from mechgym.physics.forces import smooth_wrench
from mechgym.physics.kinematics import BODY_QUAT, FRAME_SIZE, OFFSET
from mechgym.physics.state import load_generalized
from mechgym.scene import compile_model

from .scenes import free_body, key, quat_to_matrix, scene

OFFSET_BOX = 'type="box" size="0.15 0.1 0.05" mass="1.3" pos="0.1 0.02 -0.03" euler="10 20 30"'
ACTUATORS = (
    '<motor name="thrust" joint="b_free" gear="0.3 -0.2 1 0.1 0.2 0.3" ctrllimited="true" ctrlrange="-2 2"/>'
    '<position name="servo" joint="b_free" gear="1 0 0 0 0 0" kp="5" kv="2"/>'
    '<velocity name="spin" joint="b_free" gear="0 0 0 0 1 0" kv="0.05"/>'
    '<motor name="twist" jointinparent="b_free" gear="0 0 0 0.2 0 -0.1" forcelimited="true" forcerange="-0.5 0.5"/>'
    '<general name="affine" joint="c_free" gear="0 1 0 0 0 1" gaintype="affine" gainprm="2 0 0.5" '
    'biastype="affine" biasprm="0.1 0 -0.3"/>'
    '<motor name="jet" site="jet" gear="0.2 0 1 0.1 0 -0.05"/>'
    '<velocity name="brake" site="jet" gear="1 0.5 0 0 0.2 0" kv="0.4"/>'
    '<motor name="anchored" site="anchor" gear="0 0 1 0 0 0"/>'
)
# A site off the capsule's centre, turned against its body; and one on the world (which moves nothing).
JET = '<site name="jet" pos="0.05 -0.02 0.15" euler="30 -20 10"/>'
ANCHOR = '<site name="anchor" pos="1 1 1"/>'
QPOS = [0.3, -0.2, 1.1, 0.9, 0.1, 0.3, 0.2, -0.5, 0.4, 0.2, 0.5, -0.5, 0.5, 0.5]
QVEL = [1.5, -0.7, 4.0, 0.4, -2.5, 0.8, -0.3, 0.9, 0.1, 1.7, 0.2, -0.6]
CTRL = [3.0, 0.4, 2.0, 9.0, -0.7, 1.3, 0.6, 5.0]  # thrust beyond its ctrlrange, twist beyond its forcerange


def two_bodies(option: str) -> str:
    bodies = (free_body(geom=OFFSET_BOX, joint='damping="0.05"')
              + free_body("c", geom='type="capsule" size="0.04 0.2" mass="0.7" euler="40 0 70"',
                          joint='damping="0.2"', children=JET) + ANCHOR)
    return scene(bodies, actuators=ACTUATORS, option=option, keyframe=key(QPOS, QVEL, CTRL))


def engine_generalized_force(model: mujoco.MjModel) -> np.ndarray:
    """The engine's smooth wrenches at the keyframe, mapped to MuJoCo's free-joint generalized forces:
    a force F and torque T about the COM c are F at the origin o plus the torque T + (c - o) x F, whose
    generalized components are (F, R_b^T (T + (c - o) x F))."""
    engine = build_model(model)
    nbody = engine.mj_body.size
    state = State.zeros(1, nbody)
    load_generalized(engine.bodies, engine.free, engine.qposadr, engine.dofadr, model.key_qpos[0].copy(),
                     model.key_qvel[0].copy(), state, 0)
    frames, wrench = np.empty((nbody, FRAME_SIZE)), np.empty((nbody, 6))
    smooth_wrench(engine.bodies, engine.actuators, engine.env, state, 0, model.key_ctrl[0].copy(), frames, wrench)
    force = np.zeros(model.nv)
    for b in range(nbody):
        lever = -frames[b, OFFSET:OFFSET + 3]
        torque = wrench[b, 3:] + np.cross(lever, wrench[b, :3])
        adr = engine.dofadr[list(engine.free).index(b)]
        force[adr:adr + 3] = wrench[b, :3]
        force[adr + 3:adr + 6] = quat_to_matrix(frames[b, BODY_QUAT:BODY_QUAT + 4]).T @ torque
    return force


def mujoco_generalized_force(model: mujoco.MjModel) -> np.ndarray:
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, 0)
    mujoco.mj_forward(model, data)
    return data.qfrc_passive + data.qfrc_actuator


@pytest.mark.parametrize("option", [
    "",
    'viscosity="0.3"',
    'density="1.2" viscosity="0.02" wind="0.5 -1 0.3"',
    'density="1000"',
])
def test_passive_and_actuator_forces_equal_mujocos(option):
    model = compile_model(two_bodies(option))
    expected = mujoco_generalized_force(model)
    assert np.abs(expected).max() > 0.1
    np.testing.assert_allclose(engine_generalized_force(model), expected, rtol=0,
                               atol=1e-13 * np.abs(expected).max())


def test_disabled_actuation_and_ctrl_clamping_are_honoured():
    for flags in ('actuation="disable"', 'clampctrl="disable"'):
        model = compile_model(two_bodies("").replace("<flag />", f"<flag {flags}/>"))
        expected = mujoco_generalized_force(model)
        np.testing.assert_allclose(engine_generalized_force(model), expected, rtol=0,
                                   atol=1e-13 * max(1.0, np.abs(expected).max()))


def test_linear_drag_converges_at_second_order_to_the_exponential():
    """Stokes drag of MuJoCo's inertia-box model on a sphere of radius r (I = 2/5 m r^2 on every axis): box
    sides b = sqrt(6 (2/5) m r^2 / m) = sqrt(2.4) r, diameter d = b, force -3 pi d mu v, torque -pi d^3 mu w.
    So v = v0 exp(-3 pi d mu t / m) and w = w0 exp(-pi d^3 mu t / I)."""
    mu, radius, mass, duration = 0.8, 0.1, 0.5, 1.0
    v0, w0 = np.array([2.0, -1.0, 0.5]), np.array([3.0, -2.0, 1.0])
    xml = scene(free_body(geom=f'type="sphere" size="{radius}" mass="{mass}"'),
                option=f'gravity="0 0 0" viscosity="{mu}"', keyframe=key([0, 0, 0, 1, 0, 0, 0], np.r_[v0, w0]))
    diameter = math.sqrt(2.4) * radius
    v_exact = v0 * math.exp(-3 * math.pi * diameter * mu * duration / mass)
    w_exact = w0 * math.exp(-math.pi * diameter**3 * mu * duration / (0.4 * mass * radius**2))
    errors = []
    for dt in (0.02, 0.01, 0.005):
        sim = mechgym.load(xml, backend="mechgym", dt=dt)
        sim.step(round(duration / dt))
        state = sim.body("b")
        errors.append([np.abs(state.linvel - v_exact).max(), np.abs(state.angvel - w_exact).max()])
    ratios = np.array(errors[:-1]) / np.array(errors[1:])
    assert np.all((3.5 < ratios) & (ratios < 4.5)), ratios


def test_quadratic_drag_converges_at_second_order():
    """Density drag has no closed form for a tumbling body; compare with a run at dt / 16 instead (whose own
    error, 1/256 of the dt = 10 ms one, moves the expected ratio from 4 to 4.06)."""
    xml = scene(free_body(geom=OFFSET_BOX), option='density="100"', keyframe=key(QPOS[:7], QVEL[:6]))
    reference = mechgym.load(xml, backend="mechgym", dt=0.01 / 16)
    reference.step(16 * 50)
    errors = []
    for dt in (0.01, 0.005):
        sim = mechgym.load(xml, backend="mechgym", dt=dt)
        sim.step(round(0.5 / dt))
        errors.append(np.abs(sim.qvel - reference.qvel).max())
    assert 3.5 < errors[0] / errors[1] < 4.5


@pytest.mark.parametrize("dt", [0.01, 0.3])
def test_a_position_servo_on_a_free_joint_pushes_with_kp_times_ctrl_wherever_the_body_is(dt):
    """MuJoCo gives a free-joint transmission the length 0 (mj_transmission), so position="kp" pushes with
    kp (ctrl - 0) at any position: a constant force, integrated exactly: v = kp ctrl t / m, x = v t / 2."""
    kp, ctrl, mass = 5.0, 0.4, 1.5
    xml = scene(free_body(geom=f'type="sphere" size="0.1" mass="{mass}"', pos="3 -2 1"),
                actuators=f'<position joint="b_free" gear="0 1 0 0 0 0" kp="{kp}"/>', option='gravity="0 0 0"',
                keyframe=key([3, -2, 1, 1, 0, 0, 0], [0] * 6, [ctrl]))
    sim = mechgym.load(xml, backend="mechgym", dt=dt)
    sim.step(round(3.0 / dt))
    speed = kp * ctrl * sim.time / mass
    np.testing.assert_allclose(sim.body("b").linvel, [0, speed, 0], rtol=0, atol=1e-13)
    np.testing.assert_allclose(sim.body("b").pos, [3, -2 + 0.5 * speed * sim.time, 1], rtol=0, atol=1e-13)


SPRINGS = {  # a slide and a hinge with a spring, no gravity along their motion: q(t) = springref (1 - cos(w t))
    "slide": '<joint name="j" type="slide" axis="1 0 0" stiffness="40" springref="0.1"/>'
             '<geom type="box" size=".05 .05 .05" mass="2" contype="0" conaffinity="0"/>',
    "hinge": '<joint name="j" type="hinge" axis="0 0 1" stiffness="3" springref="20"/>'
             '<geom type="capsule" fromto="0 0 0 0.4 0 0" size=".02" mass="1" contype="0" conaffinity="0"/>',
}


@pytest.mark.parametrize("joint", SPRINGS)
def test_a_joint_spring_oscillates_as_the_closed_form_at_second_order(joint):
    """A hinge or slide with a stiffness k and a springref r (degrees for the hinge), started at rest at 0 without
    gravity, oscillates as q = r (1 - cos(w t)), w = sqrt(k / m) with m its mass or MuJoCo's moment of inertia about
    the axis: the error at t = 1 s falls four-fold when dt halves (measured 3.6e-7 m and 5.8e-6 rad at 1 ms), and the
    energy starts at the spring's 1/2 k r^2 on both backends and stays within the step's O(dt^2)."""
    xml = f'<mujoco><option gravity="0 0 0"/><worldbody><body name="b">{SPRINGS[joint]}</body></worldbody></mujoco>'
    model = compile_model(xml)
    stiffness, rest = model.jnt_stiffness[0], model.qpos_spring[0]
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    inertia = np.zeros((1, 1))
    mujoco.mj_fullM(model, data, inertia)
    rate = math.sqrt(stiffness / inertia[0, 0])
    errors = []
    for dt in (1e-3, 5e-4):
        sim = mechgym.load(xml, backend="mechgym", dt=dt)
        assert sim.energy() == pytest.approx(0.5 * stiffness * rest ** 2, rel=1e-12)
        sim.step(round(1.0 / dt))
        errors.append(sim.qpos[0] - rest * (1.0 - math.cos(rate)))
        assert sim.energy() == pytest.approx(0.5 * stiffness * rest ** 2, rel=1e-4)
    assert abs(errors[0]) < 1e-4 * rest
    assert 3.6 < errors[0] / errors[1] < 4.4
    assert mechgym.load(xml, backend="mujoco").energy() == pytest.approx(0.5 * stiffness * rest ** 2, rel=1e-12)


def test_a_spring_tendon_bounces_a_bob_as_the_closed_form_at_second_order():
    """A 0.5 kg bob hanging 0.3 m below a site on a spatial tendon of stiffness 200 N/m and rest length 0.3 m,
    started at rest: z(t) = z_eq + (z_0 - z_eq) cos(w t), w = sqrt(k / m), z_eq = 1 - 0.3 - m g / k. The error at
    t = 1 s falls four-fold when dt halves (measured 7.5e-6 m at 1 ms; MuJoCo's Euler 2.3e-4 m), the energy starts at
    m g z_0 on both backends. With a dead band (springlength="0.25 0.35") the bob inside it falls freely: exact."""
    tendon = ('<mujoco><worldbody><site name="top" pos="0 0 1"/><body name="bob" pos="0 0 0.7"><freejoint/>'
              '<geom type="sphere" size="0.02" mass="0.5" contype="0" conaffinity="0"/><site name="s"/></body>'
              '</worldbody><tendon><spatial name="spring" stiffness="200" springlength="{rest}"><site site="top"/>'
              '<site site="s"/></spatial></tendon></mujoco>')
    rate, equilibrium = math.sqrt(200 / 0.5), 1 - 0.3 - 0.5 * 9.81 / 200
    errors = []
    for dt in (1e-3, 5e-4):
        sim = mechgym.load(tendon.format(rest="0.3"), backend="mechgym", dt=dt)
        assert sim.energy() == pytest.approx(0.5 * 9.81 * 0.7, rel=1e-12)
        sim.step(round(1.0 / dt))
        errors.append(sim.qpos[2] - (equilibrium + (0.7 - equilibrium) * math.cos(rate)))
    assert abs(errors[0]) < 2e-5
    assert 3.6 < errors[0] / errors[1] < 4.4
    assert mechgym.load(tendon.format(rest="0.3"), backend="mujoco").energy() == pytest.approx(0.5 * 9.81 * 0.7,
                                                                                                rel=1e-12)
    sim = mechgym.load(tendon.format(rest="0.25 0.35"), backend="mechgym", dt=1e-3)
    sim.step(50)
    assert sim.qpos[2] == pytest.approx(0.7 - 0.5 * 9.81 * 0.05 ** 2, abs=1e-14)
