"""Generalised forces on hinge and slide coordinates (a joint motor's output) become body wrenches by virtual
work, through ``mechgym.load(..., backend="mechgym")``: a hinge motor spins a rod as phi = tau t^2 / (2 I_axis),
a slide motor moves a block as s = f t^2 / (2 m) exactly."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

import mechgym

from .test_double_pendulum import largest_residual

# Gravity along the hinge axis (rod) or normal to the slide (block): only the motor drives the coordinate.
ROD = """<mujoco><option gravity="0 0 -9.81"><flag contact="disable"/></option><worldbody>
  <body><joint name="j" type="hinge" axis="0 0 1" pos="0.01 0.02 0"/>
    <geom type="capsule" fromto="0 0 0 0.4 0.1 0" size="0.02" mass="0.7"/></body></worldbody>
  <actuator><motor joint="j" gear="2"/></actuator></mujoco>"""
BLOCK = """<mujoco><option gravity="0 0 -9.81"><flag contact="disable"/></option><worldbody>
  <body euler="0 0 30"><joint name="j" type="slide" axis="1 0 0"/>
    <geom type="box" size="0.1 0.05 0.02" pos="0.05 0.02 0" euler="10 20 30" mass="1.3"/></body></worldbody>
  <actuator><motor joint="j" gear="2"/></actuator></mujoco>"""


def drive(xml, force, h, n):
    """Step the one-joint scene with a motor of gear 2 at ctrl = force / 2; returns (qpos, qvel) at the end,
    the joint-space inertia M (MuJoCo's mass matrix at qpos0) and the engine's largest row error."""
    sim = mechgym.load(xml, backend="mechgym", dt=h)
    sim.ctrl = [force / 2.0]
    sim.step(n)
    model = sim.model
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    inertia = np.zeros((1, 1))
    mujoco.mj_fullM(model, data, inertia)
    return sim.qpos[0], sim.qvel[0], inertia[0, 0], largest_residual(sim)


def test_a_hinge_motor_spins_the_rod_at_tau_over_the_axial_inertia():
    errors = []
    for h in (2e-3, 1e-3):
        torque, t = 0.05, 1.0
        angle, rate, inertia, residual = drive(ROD, torque, h, int(round(t / h)))
        assert residual <= 1e-12
        assert rate == pytest.approx(torque * t / inertia, rel=1e-9)
        errors.append(angle - torque * t * t / (2.0 * inertia))
    assert abs(errors[1]) <= 1e-5
    assert 3.5 < errors[0] / errors[1] < 4.5


def test_a_slide_force_moves_the_block_as_a_constant_acceleration_exactly():
    force, h, n = 2.6, 1e-3, 500
    t = n * h
    position, rate, mass, residual = drive(BLOCK, force, h, n)
    assert residual <= 1e-12
    assert position == pytest.approx(force * t * t / (2.0 * mass), rel=1e-12)
    assert rate == pytest.approx(force * t / mass, rel=1e-12)
