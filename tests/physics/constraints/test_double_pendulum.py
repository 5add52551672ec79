"""A double pendulum of two capsules on hinges, built from MJCF: RATTLE keeps its energy bounded with no
drift (30 s here to keep the suite short; 100 s stays in the same band), keeps the hinges to round-off, and
follows MuJoCo's RK4 trajectory with a second-order error (MuJoCo solves the same ODE in generalised
coordinates)."""

from __future__ import annotations

import mujoco
import numpy as np
from numba import njit

from mechgym.physics import constraints as rattle
from mechgym.physics.joints import build_constraints, state_from_mujoco, store_coordinates, turns_from_qpos
from mechgym.physics.state import State, energy

from .helpers import DEFAULT, ENV
from .test_joints import engine_bodies

# gravity matches helpers.ENV; no contacts, damping or armature, so both engines solve the same ODE.
SCENE = """<mujoco><option gravity="0 0 -9.81" integrator="RK4"><flag contact="disable"/></option><worldbody>
  <body name="upper"><joint name="shoulder" type="hinge" axis="0 1 0"/>
    <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.04" mass="1"/>
    <body name="lower" pos="0 0 -0.5"><joint name="elbow" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.03" mass="0.6"/></body></body>
</worldbody></mujoco>"""
QPOS0 = np.array([1.6, -0.8])  # rad: a large swing


@njit(cache=True)
def simulate(bodies, env, rows, solver, coordinates, state, h, n, every, work, turns, out):
    """n RATTLE steps; every ``every`` steps record (energy, largest |g|, qpos[0], qpos[1]). Returns the steps
    completed."""
    wrench = np.zeros((state.com.shape[1], 6))
    impulse = np.zeros_like(wrench)
    grad = np.zeros(12)
    qpos, qvel = np.zeros(2), np.zeros(2)
    for k in range(n):
        if rattle.rattle_step(bodies, env, rows, solver, state, 0, h, wrench, impulse, work) != rattle.OK:
            return k
        store_coordinates(coordinates, bodies, state, 0, turns, work.vectors, grad, qpos, qvel)
        if (k + 1) % every == 0:
            residual = 0.0
            for r in range(rows.kind.size):
                residual = max(residual, abs(rattle.evaluate_row(rows, r, state, 0, grad)))
            row = (k + 1) // every - 1
            out[row, 0] = energy(bodies, env.gravity, state, 0)
            out[row, 1] = residual
            out[row, 2] = qpos[0]
            out[row, 3] = qpos[1]
    return n


def run_engine(h, duration, every):
    model = mujoco.MjModel.from_xml_string(SCENE)
    body_index, bodies = engine_bodies(model)
    constraints = build_constraints(model, body_index)
    data = mujoco.MjData(model)
    data.qpos[:] = QPOS0
    mujoco.mj_forward(model, data)
    state = State.zeros(1, 2)
    state_from_mujoco(model, data, body_index, state, 0)
    turns = np.zeros(2)
    turns_from_qpos(constraints.coordinates, data.qpos, turns)
    n = int(round(duration / h))
    out = np.zeros((n // every, 4))
    work = rattle.Workspace.empty(2, constraints.rows.kind.size)
    rows, coordinates = constraints.rows, constraints.coordinates
    done = simulate(bodies, ENV, rows, DEFAULT, coordinates, state, h, n, every, work, turns, out)
    assert done == n
    return out


def initial_energy():
    model = mujoco.MjModel.from_xml_string(SCENE)
    data = mujoco.MjData(model)
    data.qpos[:] = QPOS0
    mujoco.mj_forward(model, data)
    return -float(model.body_mass @ (data.xipos @ model.opt.gravity))  # at rest: potential only


def test_energy_stays_bounded_without_drift():
    out = run_engine(1e-3, 30.0, 100)
    e0 = initial_energy()
    scale = 1.6 * 9.81 * 0.9  # J: the energy scale m g l
    error = np.abs(out[:, 0] - e0) / scale
    assert np.max(error) <= 1e-3
    # No drift: the last ten seconds stay within the error band of the first ten.
    assert np.max(error[-100:]) <= 2.0 * np.max(error[:100]) + 1e-9
    assert np.max(out[:, 1]) <= 1e-10


def mujoco_angles(duration):
    model = mujoco.MjModel.from_xml_string(SCENE)
    model.opt.timestep = 1e-4
    data = mujoco.MjData(model)
    data.qpos[:] = QPOS0
    for _ in range(int(round(duration / model.opt.timestep))):
        mujoco.mj_step(model, data)
    return data.qpos.copy()


def test_trajectory_follows_mujoco_rk4_with_second_order_error():
    duration = 1.0  # s, before the onset of chaos
    reference = mujoco_angles(duration)
    errors = [np.max(np.abs(run_engine(h, duration, int(round(duration / h)))[-1, 2:] - reference)) for h in
              (2e-3, 1e-3)]
    assert errors[1] < 1e-3
    assert 3.5 < errors[0] / errors[1] < 4.5
