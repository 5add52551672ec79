"""A million steps of the in-house engine: the cube of seed 003 resting on its slab neither creeps nor sinks,
and the process's memory does not grow (the engine's kernels allocate nothing; each ``step`` call reuses the
simulator's scratch)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import mechgym

RESTING = [0.03, -0.02, 0.325, 1.0, 0.0, 0.0, 0.0]  # slab top at 0.30 m + half the 5 cm cube, off the centre


def resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads the resident size from /proc (Linux)")
def test_a_cube_resting_on_the_slab_for_a_million_steps_stays_put_and_memory_does_not_grow():
    sim = mechgym.load("cube_drop", backend="mechgym", dt=0.002)
    sim.reset(qpos=RESTING)
    start = sim.body("cube").pos.copy()
    sim.step(10_000)  # warm: every code path of a resting step has run, every scratch array exists
    before = resident_bytes()
    for _ in range(990):
        sim.step(1_000)
    assert sim.step_count == 1_000_000
    assert np.abs(sim.body("cube").pos - start).max() < 1e-9
    assert np.abs(sim.qvel).max() < 1e-9
    assert resident_bytes() - before < 1_000_000
