"""The in-house engine behind the Simulator interface: MuJoCo's layout and semantics, clear failures."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

import mechgym
from mechgym import SimulationError
from tests.physics.scenes import free_body, key, scene

OFFSET_BOX = 'type="box" size="0.15 0.1 0.05" mass="1.3" pos="0.1 0.02 -0.03" euler="10 20 30"'
STATIC = ('<body name="post" pos="0.5 0 0" euler="0 30 0">'
          '<geom size="0.05" mass="2" contype="0" conaffinity="0"/></body>')
# A motor with force and torque gear (body axes, ctrl clamped), a position servo with damping, a velocity
# servo, a world-axes (jointinparent) torque motor with a force limit and a thruster at a turned site, on a
# body whose centre of mass is off its origin: every frame convention of MuJoCo's free joint is exercised.
ACTUATORS = (
    '<motor name="thrust" joint="b_free" gear="0.3 -0.2 1 0.1 0.2 0.3" ctrllimited="true" ctrlrange="-2 2"/>'
    '<position name="servo" joint="b_free" gear="1 0 0 0 0 0" kp="5" kv="2"/>'
    '<velocity name="spin" joint="b_free" gear="0 0 0 0 1 0" kv="0.05"/>'
    '<motor name="twist" jointinparent="b_free" gear="0 0 0 0.2 0 -0.1" forcelimited="true" forcerange="-0.5 0.5"/>'
    '<motor name="jet" site="jet" gear="0 0 1 0 0 0.05"/>'
)
JET = '<site name="jet" pos="-0.1 0.05 0.02" euler="20 10 -30"/>'
QPOS, QVEL = [0.3, -0.2, 1.1, 0.9, 0.1, 0.3, 0.2], [1.5, -0.7, 4.0, 0.4, -2.5, 0.8]
CTRL = [3.0, 0.4, 2.0, 1.0, 2.5]


def driven(integrator: str = "Euler") -> str:
    return scene(free_body(geom=OFFSET_BOX, joint='damping="0.05"', children=JET) + STATIC, actuators=ACTUATORS,
                 option=f'integrator="{integrator}"', keyframe=key(QPOS, QVEL, CTRL))


def test_the_state_reads_like_mujocos():
    ours, theirs = (mechgym.load(driven(), backend=b) for b in ("mechgym", "mujoco"))
    np.testing.assert_allclose(ours.qpos, theirs.qpos, rtol=0, atol=1e-15)
    np.testing.assert_allclose(ours.qvel, theirs.qvel, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(ours.ctrl, theirs.ctrl)
    for name in ("b", "post", "world"):
        a, b = ours.body(name), theirs.body(name)
        for field in ("pos", "quat", "linvel", "angvel"):
            np.testing.assert_allclose(getattr(a, field), getattr(b, field), rtol=0, atol=1e-14, err_msg=field)
    assert ours.energy() == pytest.approx(theirs.energy(), rel=1e-14)
    assert ours.contacts() == [] and ours.events == []


def test_actuated_trajectories_agree_with_mujoco_at_second_order():
    """MuJoCo's RK4 at dt = 1e-4 is exact to ~1e-13 here; our error after 1 s must fall ~4x per halving."""
    reference = mechgym.load(driven("RK4"), backend="mujoco", dt=1e-4)
    reference.step(10_000)
    errors = []
    for dt in (0.02, 0.01, 0.005):
        sim = mechgym.load(driven(), backend="mechgym", dt=dt)
        sim.step(round(1.0 / dt))
        turn = np.zeros(3)
        mujoco.mju_subQuat(turn, sim.qpos[3:], reference.qpos[3:])
        errors.append([np.abs(sim.qpos[:3] - reference.qpos[:3]).max(), np.abs(turn).max(),
                       np.abs(sim.qvel - reference.qvel).max()])
    errors = np.array(errors)
    ratios = errors[:-1] / errors[1:]
    assert np.all((3.5 < ratios) & (ratios < 4.5)), ratios
    assert errors[-1].max() < 0.01  # and the constant is small: 5 ms is within 3e-3 of MuJoCo


def test_ctrl_is_a_writable_view_and_bad_controls_are_refused():
    sim = mechgym.load(driven(), backend="mechgym", dt=0.01)
    sim.ctrl[0] = 0.0
    sim.ctrl = [0.0] * 5
    sim.step(3)
    sim.ctrl[1] = np.nan
    with pytest.raises(ValueError, match="servo"):
        sim.step(1)
    with pytest.raises(ValueError, match="shape"):
        sim.ctrl = [1.0, 2.0]
    with pytest.raises(ValueError):
        sim.apply_force("b", [np.inf, 0.0, 0.0])
    with pytest.raises(ValueError, match="unknown body"):
        sim.apply_force("nobody", [1.0, 0.0, 0.0])


def test_a_non_finite_state_is_refused_and_never_exposed():
    sim = mechgym.load(scene(free_body(geom='type="sphere" size="0.01" mass="1e-3"')), backend="mechgym", dt=0.01)
    sim.step(4)
    good = sim.qpos
    sim.apply_force("b", [1e308, 0.0, 0.0], start=0.05, stop=0.06)
    with pytest.raises(SimulationError, match="non-finite"):
        sim.step(10)
    assert sim.step_count == 5  # the fifth step ran clean; the sixth overflowed and was rolled back
    assert np.isfinite(sim.qpos).all() and np.isfinite(sim.qvel).all()
    assert not np.array_equal(sim.qpos, good)
    with pytest.raises(SimulationError, match="failed earlier"):
        sim.step(1)
    sim.reset()
    sim.step(1)


def test_damping_too_stiff_for_the_fixed_point_is_reported():
    # h d / (2 m) = 0.01 x 1000 / 2 = 5 > 1: the fixed-point map of the closing kick diverges.
    xml = scene(free_body(geom='type="sphere" size="0.1" mass="1"', joint='damping="1000"'),
                keyframe=key([0, 0, 0, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0]))
    sim = mechgym.load(xml, backend="mechgym", dt=0.01)
    with pytest.raises(SimulationError, match="too stiff"):
        sim.step(1)
    assert sim.step_count == 0 and np.array_equal(sim.qvel, [1, 0, 0, 0, 0, 0])


# A double pendulum whose elbow is a damped, position-servoed hinge: constraint rows, warm-start impulses, hinge
# turns and an implicit closing kick all enter the state.
JOINTED = """<mujoco><option gravity="0 0 -9.81"><flag contact="disable"/></option><worldbody>
  <body name="upper"><joint name="shoulder" type="hinge" axis="0 1 0"/>
    <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.04" mass="1"/>
    <body name="lower" pos="0 0 -0.5"><joint name="elbow" type="hinge" axis="0 1 0" damping="0.1"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.03" mass="0.6"/></body></body>
</worldbody><actuator><position joint="elbow" kp="3"/></actuator>
<keyframe><key qpos="1.6 -0.8" qvel="4 0" ctrl="0.5"/></keyframe></mujoco>"""


def test_get_state_and_set_state_continue_bit_for_bit_with_constraints():
    sim = mechgym.load(JOINTED, backend="mechgym", dt=1e-3)
    sim.step(123)
    saved = sim.get_state()
    assert np.any(saved.physics[0].impulse_position) and np.any(saved.physics[0].impulse_velocity)
    sim.apply_force("lower", [0.5, 0, 0], start=0.2, stop=0.3)
    sim.step(400)
    first = (sim.qpos, sim.qvel, sim.energy(), sim.constraint_forces(), sim.body("lower"))
    sim.set_state(saved)
    assert sim.time == 123 * 1e-3
    sim.apply_force("lower", [0.5, 0, 0], start=0.2, stop=0.3)
    sim.step(400)
    second = (sim.qpos, sim.qvel, sim.energy(), sim.constraint_forces(), sim.body("lower"))
    assert sim.time == 523 * 1e-3 and sim.step_count == 523
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])
    assert first[2] == second[2]
    assert first[3].keys() == second[3].keys()
    for key_ in first[3]:
        np.testing.assert_array_equal(first[3][key_], second[3][key_])
    np.testing.assert_array_equal(first[4].pos, second[4].pos)
    # A fresh load continues exactly like a reset one.
    sim.reset()
    assert all(not np.any(values) for values in sim.constraint_forces().values())
    fresh = mechgym.load(JOINTED, backend="mechgym", dt=1e-3)
    sim.step(50)
    fresh.step(50)
    np.testing.assert_array_equal(sim.qpos, fresh.qpos)


def test_rods_that_cannot_all_hold_are_reported_and_the_state_is_kept():
    # Two rods between the same two sites with lengths 1 m and 1.1 m: no pose satisfies both.
    xml = scene('<site name="anchor"/><body name="ball" pos="0 0 -1"><freejoint/><site name="knot"/>'
                '<geom size="0.05" mass="1" contype="0" conaffinity="0"/></body>',
                extra='<tendon><spatial name="a"><site site="anchor"/><site site="knot"/></spatial>'
                      '<spatial name="b"><site site="anchor"/><site site="knot"/></spatial></tendon>'
                      '<equality><tendon tendon1="a"/><tendon tendon1="b" polycoef="0.1 0 0 0 0"/></equality>')
    sim = mechgym.load(xml, backend="mechgym", dt=1e-3)
    before = sim.qpos
    with pytest.raises(SimulationError, match="constraint projection did not converge"):
        sim.step(5)
    assert sim.step_count == 0 and np.array_equal(sim.qpos, before)
    with pytest.raises(SimulationError, match="failed earlier"):
        sim.step(1)
