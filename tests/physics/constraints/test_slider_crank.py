"""The bundled slider-crank (seed 002) with the slider's walls removed is a planar chain of three hinges
driven only by its initial spin (crank at 150 rad/s): RATTLE conserves its energy to O(h^2) with no drift
and keeps every hinge to round-off."""

from __future__ import annotations

import re

import mujoco
import numpy as np

from mechgym.physics import constraints as rattle
from mechgym.physics.joints import build_constraints, state_from_mujoco, turns_from_qpos
from mechgym.physics.model import Environment
from mechgym.physics.state import State, energy
from mechgym.scene import bundled_scene_path

from .helpers import DEFAULT
from .test_double_pendulum import simulate
from .test_joints import engine_bodies


def without_walls() -> mujoco.MjModel:
    xml = bundled_scene_path("slider_crank").read_text()
    xml, removed = re.subn(r'<geom name="wall_(top|bottom)"[^>]*/>', "", xml)
    assert removed == 2
    return mujoco.MjModel.from_xml_string(xml)


def energy_errors(h, duration):
    """Largest relative energy error, sampled every 10 steps, and the largest hinge row error."""
    model = without_walls()
    body_index, bodies = engine_bodies(model)
    constraints = build_constraints(model, body_index)
    env = Environment(**{name: False for name in Environment._fields}
                      | {"gravity": model.opt.gravity.copy(), "wind": np.zeros(3)})
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, 0)
    mujoco.mj_forward(model, data)
    state = State.zeros(1, bodies.mass.size)
    state_from_mujoco(model, data, body_index, state, 0)
    turns = np.zeros(constraints.coordinates.rows.kind.size)
    turns_from_qpos(constraints.coordinates, data.qpos, turns)
    initial = energy(bodies, env.gravity, state, 0)
    n = int(round(duration / h))
    out = np.zeros((n // 10, 4))
    work = rattle.Workspace.empty(bodies.mass.size, constraints.rows.kind.size)
    done = simulate(bodies, env, constraints.rows, DEFAULT, constraints.coordinates, state, h, n, 10, work, turns,
                    out)
    assert done == n
    error = np.abs(out[:, 0] - initial) / initial
    return error, np.max(out[:, 1])


def test_energy_is_conserved_to_second_order_and_the_hinges_hold():
    duration = 0.1  # s: 2.4 crank turns
    coarse, _ = energy_errors(2e-4, duration)
    fine, residual = energy_errors(1e-4, duration)
    assert residual <= 1e-10
    assert np.max(fine) <= 2e-4  # (omega h)^2 = 2.3e-4 at 150 rad/s
    assert 3.5 < np.max(coarse) / np.max(fine) < 4.5
    tenth = fine.size // 10
    assert np.max(fine[-tenth:]) <= 1.1 * np.max(fine[:tenth])  # no drift
