"""Joint actuators and joint damping on hinge and slide joints, through ``mechgym.load(..., backend="mechgym")``:
a pendulum on a cart (slide, then hinge) driven by a clamped motor, a position servo with kv and a velocity
servo, with joint damping, follows MuJoCo's RK4 trajectory (dt = 1e-4 s, exact to ~1e-10 here) with an
error that falls ~4x per halving of dt: the actuator law, the velocity-dependent forces (the joint damping and
the servos' kv, all solved as damper rows within the velocity projection) and the coordinates are all second
order."""

from __future__ import annotations

import numpy as np

import mechgym

SCENE = """<mujoco><option gravity="0 0 -9.81" integrator="{integrator}"><flag contact="disable"/></option>
<worldbody>
  <body name="cart" pos="0 0 1" euler="0 0 20">
    <joint name="track" type="slide" axis="1 0 0" damping="0.4"/>
    <geom type="box" size="0.1 0.05 0.03" mass="2" euler="0 5 0"/>
    <body name="arm" pos="0.05 0 0">
      <joint name="pivot" type="hinge" axis="0 1 0" pos="0 0 0.01" damping="0.05"/>
      <geom type="capsule" fromto="0 0 0 0.1 0 -0.5" size="0.03" mass="0.8"/>
    </body>
  </body>
</worldbody>
<actuator>
  <motor name="push" joint="track" gear="2" ctrllimited="true" ctrlrange="-1 1"/>
  <velocity name="cruise" joint="track" kv="3"/>
  <position name="hold" joint="pivot" kp="4" kv="0.3" gear="1.5"/>
  <motor name="twist" joint="pivot" gear="0.5"/>
</actuator>
<keyframe><key qpos="0.1 0.6" qvel="0.3 -1" ctrl="3 0.5 -0.2 0.4"/></keyframe></mujoco>"""


def test_joint_actuators_and_damping_follow_mujoco_at_second_order():
    reference = mechgym.load(SCENE.format(integrator="RK4"), backend="mujoco", dt=1e-4)
    reference.step(10_000)
    errors = []
    for dt in (0.02, 0.01, 0.005):
        sim = mechgym.load(SCENE.format(integrator="Euler"), backend="mechgym", dt=dt)
        np.testing.assert_allclose(sim.qpos, [0.1, 0.6], rtol=0, atol=1e-15)
        np.testing.assert_allclose(sim.qvel, [0.3, -1.0], rtol=0, atol=1e-14)
        sim.step(round(1.0 / dt))
        errors.append([np.abs(sim.qpos - reference.qpos).max(), np.abs(sim.qvel - reference.qvel).max()])
    errors = np.array(errors)
    ratios = errors[:-1] / errors[1:]
    assert np.all((3.5 < ratios) & (ratios < 4.5)), ratios
    assert errors[-1].max() < 5e-3, errors
