"""SHAKE's first iterate (``constraints.predict_shake``): whatever impulse the opening kick gives a jointed body,
however large and however it changed since the previous step, the rows take it whole in one linear solve before
the drift, so the nonlinear iteration starts near the constrained poses."""

from __future__ import annotations

import numpy as np
import pytest

import mechgym

CARRIAGE, PAD = 1.0, 0.05  # kg
# A carriage on a vertical slide carrying a light pad on a horizontal slide (the gripper's finger, without
# gravity or contacts): a force window on the pad moves the carriage and the pad together along z and the pad
# alone along x; every other component, and every torque, is taken by the two joints.
SCENE = f"""<mujoco><option gravity="0 0 0"/><worldbody>
  <body name="carriage" pos="0 0 0.2"><joint type="slide" axis="0 0 1"/>
    <geom type="box" size="0.05 0.02 0.01" mass="{CARRIAGE}" contype="0" conaffinity="0"/>
    <body name="pad" pos="0.04 0 -0.05"><joint type="slide" axis="1 0 0"/>
      <geom type="box" size="0.002 0.01 0.02" mass="{PAD}" contype="0" conaffinity="0"/></body>
  </body></worldbody></mujoco>"""


@pytest.mark.parametrize("seed", range(4))
def test_a_violent_kick_across_a_light_bodys_slide_moves_the_joints_as_the_closed_form_says(seed):
    """Random force windows of one step (up to 500 N and 5 N m, a 50 g pad: the pad alone would leave its slide
    by up to 25 cm in one drift at 20 ms) at dt from 0.5 to 20 ms. The joints' velocities after the step are the
    momentum balance's, exactly: lift F_z dt / (m_carriage + m_pad), finger F_x dt / m_pad; ten free steps keep
    them. Measured: agreement to round-off. Before the first iterate was predicted (SHAKE warm started from the
    previous step's impulses and iterated from the drift), every seed had kicks whose SHAKE did not converge."""
    rng = np.random.default_rng(seed)
    for _ in range(10):
        dt = 10.0 ** rng.uniform(np.log10(5e-4), np.log10(2e-2))
        force, torque = rng.uniform(-500.0, 500.0, 3), rng.uniform(-5.0, 5.0, 3)
        sim = mechgym.load(SCENE, backend="mechgym", dt=dt)
        sim.apply_force("pad", force, torque, start=0.0, stop=dt)
        expected = np.array([force[2] * dt / (CARRIAGE + PAD), force[0] * dt / PAD])
        sim.step(1)
        np.testing.assert_allclose(sim.qvel, expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max())
        sim.step(10)
        np.testing.assert_allclose(sim.qvel, expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max())
