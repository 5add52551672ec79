"""Continuous collision of turning bodies, as a property: a box or a capsule thrown at a 1 mm wall with a random
spin never passes through it and is never inside it by more than the contact margin, at any of the cube-drop
sweep's 15 physics steps (0.5-50 ms).

Each draw (seeded, the same at every dt): a box of half sizes s, 0.3-1 s, 0.3-1 s or a capsule of half length s and
radius 0.3-0.7 s, s in 1-5 cm, of 10 g-10 kg (log-uniform), in an orientation uniform over the rotations, with a
spin of up to 15 rad/s about a random axis, thrown at 1-5 m/s within 60 degrees of the wall's normal from 1-15 cm
in front of it (beyond its own reach), anywhere over the middle 24 x 24 cm of the 50 x 50 cm wall, under gravity,
with a restitution of 0-0.9; 0.3 s. An impact often leaves the body spinning at 50-160 rad/s, so that in the
following steps it turns by up to 8 rad (50 ms) while it touches the wall. The body passes through when its centre
goes from in front of the wall's mid-plane to behind it, inside the wall's footprint, between two steps; its
overlap with the wall is MuJoCo's ``mj_geomDistance`` after each step.

Before the position correction's turn limit and the stale bodies' recheck (``contact.position``), a box went
through at 30 ms (draw 66: its linearised correction turned it by 4.2 rad, across the wall) and the capsules
overlapped the wall by up to 3.6 mm (0.25 mm at 4 ms, 0.2-3.6 mm at 12-50 ms): the gaps of a body turning by
0.5-8 rad after its first touch were carried linearly from that pose to the end of the step."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

import mechgym
from mechgym.physics.tolerances import MARGIN
from mechgym.robustness.cube_drop import DT_MS

DRAWS = 200
DURATION = 0.3  # s
WALL_HALF = np.array([0.0005, 0.25, 0.25])  # m, centred at the origin, normal along x


def _throw(kind: str, draw: int) -> tuple[str, np.ndarray, np.ndarray]:
    """(MJCF, orientation quaternion, qvel (6,): linear, angular) of one draw."""
    rng = np.random.default_rng([14, 1, ["box", "capsule"].index(kind), draw])
    s = rng.uniform(0.01, 0.05)
    size = {"box": f"{s:.4f} {s * rng.uniform(0.3, 1):.4f} {s * rng.uniform(0.3, 1):.4f}",
            "capsule": f"{s * rng.uniform(0.3, 0.7):.4f} {s:.4f}"}[kind]
    reach = 1.8 * s  # above the half diagonal of either shape
    restitution = rng.uniform(0.0, 0.9)
    x = -(reach + rng.uniform(0.01, 0.15))
    y, z = rng.uniform(-0.12, 0.12, 2)
    mass = np.exp(rng.uniform(np.log(0.01), np.log(10.0)))
    xml = (f'<mujoco><custom><numeric name="restitution:body" data="{restitution:.3f}"/></custom><worldbody>'
           f'<geom name="wall" type="box" size="{WALL_HALF[0]} {WALL_HALF[1]} {WALL_HALF[2]}"/>'
           f'<body name="b" pos="{x:.4f} {y:.4f} {z:.4f}"><freejoint/>'
           f'<geom name="body" type="{kind}" size="{size}" mass="{mass:.4g}"/></body></worldbody></mujoco>')
    quat = rng.normal(size=4)
    spin = rng.normal(size=3)
    spin *= rng.uniform(0.0, 15.0) / np.linalg.norm(spin)
    angle, azimuth, speed = rng.uniform(0.0, np.pi / 3), rng.uniform(0.0, 2 * np.pi), rng.uniform(1.0, 5.0)
    velocity = speed * np.array([np.cos(angle), np.sin(angle) * np.cos(azimuth), np.sin(angle) * np.sin(azimuth)])
    return xml, quat / np.linalg.norm(quat), np.concatenate([velocity, spin])


@pytest.mark.slow
@pytest.mark.parametrize("dt_ms", DT_MS)
@pytest.mark.parametrize("kind", ["box", "capsule"])
def test_a_spinning_body_thrown_at_a_thin_wall_never_passes_it(kind, dt_ms):
    dt = dt_ms / 1000.0
    through, hits, deepest = [], 0, (0.0, None)
    for draw in range(DRAWS):
        xml, quat, qvel = _throw(kind, draw)
        sim = mechgym.load(xml, backend="mechgym", dt=dt)
        qpos = sim.model.qpos0.copy()
        qpos[3:7] = quat
        sim.reset(qpos=qpos, qvel=qvel)
        data = mujoco.MjData(sim.model)
        wall, body = sim.model.geom("wall").id, sim.model.geom("body").id
        front, hit = True, False
        for _ in range(round(DURATION / dt)):
            sim.step(1)
            hit = hit or abs(sim.qvel[0] - qvel[0]) > 0.05  # only the wall changes the velocity along its normal
            data.qpos[:] = sim.qpos
            mujoco.mj_kinematics(sim.model, data)
            overlap = -mujoco.mj_geomDistance(sim.model, data, wall, body, 0.01, None)
            if overlap > deepest[0]:
                deepest = (overlap, (draw, round(sim.time, 4)))
            centre = sim.body("b").pos
            inside = bool(np.all(np.abs(centre[1:]) < WALL_HALF[1:]))
            if inside and front and centre[0] > 0.0:
                through.append((draw, round(sim.time, 4)))
                break
            front = inside and centre[0] <= 0.0
        hits += hit
    assert not through, f"draws that passed through the wall (draw, t): {through}"
    assert deepest[0] <= MARGIN, f"deepest overlap {deepest[0]:.3g} m (draw, t: {deepest[1]})"
    assert hits >= 0.9 * DRAWS, f"only {hits} of {DRAWS} draws reached the wall"
