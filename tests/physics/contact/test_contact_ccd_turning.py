"""Continuous collision of turning bodies, as a property: seed 003's 5 cm cube tossed onto its 1 cm slab with a
random orientation and spin never ends under the slab, at any of the cube-drop sweep's 15 physics steps.

Each draw (seeded, the same at every dt): an orientation uniform over the rotations, a spin of up to 10 rad/s
about a random axis, the centre anywhere over the middle 20 x 20 cm of the 24 x 24 cm slab (so the cube often
lands over an edge) 6-20 cm above its resting height, thrown down at 1-4.5 m/s (a drop of up to 1 m). The cube
is tunnelled when its centre is found below the slab's top face inside the slab's footprint: it is then half
into the slab or through it (a tossed cube that lands on an edge and tips off the slab passes beside it, not
under it). Nor is it ever found inside the slab by more than the contact margin (0.1 mm; MuJoCo's
``mj_geomDistance`` after each step): the deepest overlap over the 200 draws was 0.07 mm (at 4 ms) at 8810355, where
the position correction's passes came in (before them, over 60 other draws, up to 2.2 mm at 30 ms). The bundled
scene is used as it is (restitution 0, friction 1), through the Simulator interface."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

import mechgym
from mechgym.physics.tolerances import MARGIN
from mechgym.robustness.cube_drop import DT_MS

DRAWS = 200
DURATION = 0.4  # s: the impacts and the settling (the cube reaches the slab within 0.06 s)


def _toss(draw: int, model: mujoco.MjModel, rest: float) -> tuple[np.ndarray, np.ndarray]:
    """(qpos, qvel) of the draw; ``rest``: the cube's resting height on the slab (m)."""
    rng = np.random.default_rng([3, draw])
    qpos, qvel = model.qpos0.copy(), np.zeros(model.nv)
    quat = rng.normal(size=4)
    qpos[3:7] = quat / np.linalg.norm(quat)
    qpos[0:3] = (*rng.uniform(-0.1, 0.1, size=2), rest + rng.uniform(0.06, 0.2))
    spin = rng.normal(size=3)
    qvel[3:6] = spin * rng.uniform(0.0, 10.0) / np.linalg.norm(spin)
    qvel[2] = -rng.uniform(1.0, 4.5)
    return qpos, qvel


@pytest.mark.slow
@pytest.mark.parametrize("dt_ms", DT_MS)
def test_a_tossed_spinning_cube_never_ends_under_the_slab(dt_ms):
    dt = dt_ms / 1000.0
    sim = mechgym.load("cube_drop", backend="mechgym", dt=dt)
    slab = sim.model.geom("slab")
    top, half = slab.pos[2] + slab.size[2], slab.size[:2]
    rest = top + sim.model.geom("cube").size[2]
    data = mujoco.MjData(sim.model)
    tunnelled, deepest = [], (0.0, None)
    for draw in range(DRAWS):
        qpos, qvel = _toss(draw, sim.model, rest)
        sim.reset(qpos=qpos, qvel=qvel)
        for _ in range(round(DURATION / dt)):
            sim.step(1)
            data.qpos[:] = sim.qpos
            mujoco.mj_kinematics(sim.model, data)
            overlap = -mujoco.mj_geomDistance(sim.model, data, slab.id, sim.model.geom("cube").id, 0.01, None)
            if overlap > deepest[0]:
                deepest = (overlap, (draw, round(sim.time, 4)))
            centre = sim.body("cube").pos
            if np.all(np.abs(centre[:2] - slab.pos[:2]) < half) and centre[2] < top:
                tunnelled.append((draw, round(sim.time, 4), centre.round(4).tolist()))
                break
    assert not tunnelled, f"draws that ended under the slab (draw, t, centre): {tunnelled}"
    assert deepest[0] <= MARGIN, f"deepest overlap {deepest[0]:.3g} m (draw, t: {deepest[1]})"
