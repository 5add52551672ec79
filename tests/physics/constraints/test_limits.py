"""Hinge range limits are one-sided ANGLE rows: a rod swinging into its limit stops there without passing it
and rests on it with the static reaction torque m g d."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest

from mechgym.physics import constraints as rattle
from mechgym.physics.joints import build_constraints, state_from_mujoco
from mechgym.physics.state import State

from .helpers import GRAVITY, run
from .test_joints import engine_bodies

MASS, LENGTH = 1.0, 0.4  # kg, m: a capsule from the hinge along +x; its COM is LENGTH / 2 from the hinge
# A positive angle about +y turns +x towards -z, so gravity pushes the horizontal rod into its upper limit 0.
SCENE = f"""<mujoco><option gravity="0 0 -{GRAVITY}"><flag contact="disable"/></option><worldbody>
  <body name="rod"><joint name="hinge" type="hinge" axis="0 1 0" limited="true" range="-90 0"/>
    <geom type="capsule" fromto="0 0 0 {LENGTH} 0 0" size="0.02" mass="{MASS}"/></body>
</worldbody></mujoco>"""


def test_a_rod_swinging_into_its_hinge_limit_stops_and_rests_on_it():
    model = mujoco.MjModel.from_xml_string(SCENE)
    body_index, bodies = engine_bodies(model)
    constraints = build_constraints(model, body_index)
    rows = constraints.rows
    upper = int(np.nonzero(rows.sense == rattle.UPPER)[0][0])
    data = mujoco.MjData(model)
    data.qpos[0] = -math.radians(60.0)  # 60 degrees above the horizontal, at rest
    mujoco.mj_forward(model, data)
    state = State.zeros(1, 1)
    state_from_mujoco(model, data, body_index, state, 0)

    h, n = 1e-3, 2000  # the rod reaches the limit after about 0.4 s
    done, trace, work = run(bodies, rows, state, h, n)
    assert done == n
    assert np.max(trace[:, 3]) <= 1e-10  # never past the limit (nor off the hinge)
    forces = np.zeros(rows.kind.size)
    rattle.reaction_forces(work, 0, h, forces)
    # At rest on the limit: the limit row carries the gravity torque m g d about the hinge axis.
    assert forces[upper] == pytest.approx(-MASS * GRAVITY * LENGTH / 2.0, rel=1e-9)
    assert np.max(np.abs(state.vel[0, 0])) <= 1e-9
