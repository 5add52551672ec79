"""Simulator.frames: the listed bodies' frames in one array, as ``body`` reads them, on both backends alike."""

from __future__ import annotations

import numpy as np

import mechgym
from mechgym.simulator import FRAME_ANGVEL, FRAME_LINVEL, FRAME_POS, FRAME_QUAT, FRAME_SIZE

NAMES = ("card", "world", "left_finger", "carriage")  # the world: static


def _frames(sim) -> np.ndarray:
    out = np.full((len(NAMES), FRAME_SIZE), np.nan)
    sim.frames(np.array([sim.body_id(name) for name in NAMES]), out)
    return out


def test_frames_are_the_bodies_readings_and_agree_between_the_backends():
    rng = np.random.default_rng(3)
    sims = [mechgym.load("gripper", backend=backend) for backend in ("mechgym", "mujoco")]
    qpos, qvel = sims[1].model.qpos0.copy(), rng.uniform(-0.5, 0.5, sims[1].model.nv)
    qpos[3:7] = [0.9, 0.1, -0.3, 0.2]  # the card turned
    for sim in sims:
        sim.reset(qpos=qpos, qvel=qvel)
    engine, mujoco = (_frames(sim) for sim in sims)
    for sim, frames in zip(sims, (engine, mujoco), strict=True):
        for name, frame in zip(NAMES, frames, strict=True):
            body = sim.body(name)
            np.testing.assert_array_equal(frame[FRAME_POS:FRAME_POS + 3], body.pos)
            np.testing.assert_array_equal(frame[FRAME_QUAT:FRAME_QUAT + 4], body.quat)
            np.testing.assert_array_equal(frame[FRAME_LINVEL:FRAME_LINVEL + 3], body.linvel)
            np.testing.assert_array_equal(frame[FRAME_ANGVEL:FRAME_ANGVEL + 3], body.angvel)
    np.testing.assert_allclose(engine, mujoco, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(engine[1, FRAME_LINVEL:], 0.0)  # the world at rest
    assert np.abs(engine[0, FRAME_ANGVEL:]).max() > 0.1 and np.abs(engine[2, FRAME_LINVEL:]).max() > 0.01
