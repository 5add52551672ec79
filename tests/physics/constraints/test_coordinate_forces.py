"""Generalised forces on hinge and slide coordinates (the joint actuators' output) become body wrenches by
virtual work: a hinge motor spins a rod as phi = tau t^2 / (2 I_axis), a slide force moves a block as
s = f t^2 / (2 m)."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from mechgym.physics import constraints as rattle
from mechgym.physics.joints import add_coordinate_forces, build_constraints, state_from_mujoco, store_coordinates
from mechgym.physics.state import State

from .helpers import DEFAULT, ENV
from .test_joints import engine_bodies

ROD = """<mujoco><option gravity="0 0 -9.81"><flag contact="disable"/></option><worldbody>
  <body><joint type="hinge" axis="0 0 1" pos="0.01 0.02 0"/>
    <geom type="capsule" fromto="0 0 0 0.4 0.1 0" size="0.02" mass="0.7"/></body></worldbody></mujoco>"""
BLOCK = """<mujoco><option gravity="0 0 -9.81"><flag contact="disable"/></option><worldbody>
  <body euler="0 0 30"><joint type="slide" axis="1 0 0"/>
    <geom type="box" size="0.1 0.05 0.02" pos="0.05 0.02 0" euler="10 20 30" mass="1.3"/></body></worldbody></mujoco>"""


def drive(xml, force, h, n):
    """Step the one-joint scene under gravity and a constant generalised force; returns (qpos, qvel) at the
    end, the joint-space inertia M (MuJoCo's mass matrix at qpos0) and the engine's largest row error."""
    model = mujoco.MjModel.from_xml_string(xml)
    body_index, bodies = engine_bodies(model)
    constraints = build_constraints(model, body_index)
    rows, coordinates = constraints.rows, constraints.coordinates
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    state = State.zeros(1, 1)
    state_from_mujoco(model, data, body_index, state, 0)
    vectors, grad = np.zeros((8, 3)), np.zeros(12)
    work = rattle.Workspace.empty(1, rows.kind.size)
    wrench, impulse = np.zeros((1, 6)), np.zeros((1, 6))
    for _ in range(n):
        # A force along a world-fixed hinge axis or slide direction: the wrench is the same every step.
        wrench[:] = 0.0
        add_coordinate_forces(coordinates, state, 0, np.array([force]), grad, wrench)
        assert rattle.rattle_step(bodies, ENV, rows, DEFAULT, state, 0, h, wrench, impulse, work) == rattle.OK
    qpos, qvel = np.zeros(1), np.zeros(1)
    store_coordinates(coordinates, bodies, state, 0, np.zeros(1), vectors, grad, qpos, qvel)
    residual = max(abs(rattle.evaluate_row(rows, r, state, 0, grad)) for r in range(rows.kind.size))
    inertia = np.zeros((1, 1))
    mujoco.mj_fullM(model, data, inertia)
    return qpos[0], qvel[0], inertia[0, 0], residual


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
