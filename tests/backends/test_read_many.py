"""Simulator.read_many: a task's readings of several simulators at once (on the in-house engine one compiled call)
are each simulator's own readings, read one by one through the interface (``frames``, ``qpos``, ``qvel``, ``ctrl``,
``touching``, ``time``)."""

from __future__ import annotations

import numpy as np
import pytest

import mechgym
from mechgym.simulator import FRAME_SIZE, Readings, ReadSpec, Simulator

# (scene, bodies, geom pairs): the gripper's pads and card touch when it holds the card
SCENES = {
    "gripper": (("card", "world", "left_finger"), (("left_pad", "card"), ("card", "right_pad"), ("card", "table"))),
    "cube_drop": (("cube", "world"), (("cube", "slab"),)),
    "slider_crank": (("crank", "slider"), (("slider", "wall_top"), ("wall_bottom", "slider"))),
}


def _spec(sim, bodies, pairs) -> ReadSpec:
    model = sim.model
    return ReadSpec(np.array([sim.body_id(name) for name in bodies]), np.arange(model.nq)[::-1].copy(),
                    np.arange(model.nv)[1::2].copy(), np.arange(model.nu),
                    np.array([[model.geom(a).id, model.geom(b).id] for a, b in pairs], dtype=np.int64).reshape(-1, 2))


def _empty(n, spec) -> Readings:
    return Readings(np.full(n, np.nan), np.full((n, spec.qpos.size), np.nan), np.full((n, spec.qvel.size), np.nan),
                    np.full((n, spec.ctrl.size), np.nan), np.full((n, spec.bodies.size, FRAME_SIZE), np.nan),
                    np.full((n, len(spec.pairs)), np.nan))


@pytest.mark.parametrize("backend", ["mechgym", "mujoco"])
@pytest.mark.parametrize("scene", sorted(SCENES))
def test_read_many_reads_what_each_simulator_reads_alone(scene, backend):
    rng = np.random.default_rng(7)
    sims = [mechgym.load(scene, backend=backend) for _ in range(3)]
    for k, sim in enumerate(sims):
        low, high = sim.model.actuator_ctrlrange.T
        sim.ctrl = rng.uniform(low, high)
        sim.step(40 * (k + 1))  # three different states, contacts made and broken
    spec, rows = _spec(sims[0], *SCENES[scene]), [2, 0, 1]
    out = _empty(4, spec)
    type(sims[0]).read_many(sims, spec, rows, out)
    for sim, row in zip(sims, rows, strict=True):
        frames = np.empty((spec.bodies.size, FRAME_SIZE))
        sim.frames(spec.bodies, frames)
        touching = sim.touching()
        names = [(sim.geom_name(a), sim.geom_name(b)) for a, b in spec.pairs.tolist()]
        assert out.time[row] == sim.time
        np.testing.assert_array_equal(out.qpos[row], sim.qpos[spec.qpos])
        np.testing.assert_array_equal(out.qvel[row], sim.qvel[spec.qvel])
        np.testing.assert_array_equal(out.ctrl[row], sim.ctrl[spec.ctrl])
        np.testing.assert_array_equal(out.frames[row], frames)
        np.testing.assert_array_equal(out.touching[row], [frozenset(pair) in touching for pair in names])
    assert np.isnan(out.time[3])  # a row no simulator was given is left alone
    if scene == "gripper":  # the pairs were read both ways: some touch, some do not
        assert 0 < np.count_nonzero(out.touching[:3]) < out.touching[:3].size


def test_the_engine_reads_in_one_compiled_call_what_the_interface_reads_one_by_one():
    sims = [mechgym.load("gripper", backend="mechgym") for _ in range(2)]
    for k, sim in enumerate(sims):
        sim.step(100 * (k + 1))
    spec = _spec(sims[0], *SCENES["gripper"])
    compiled, one_by_one = _empty(2, spec), _empty(2, spec)
    type(sims[0]).read_many(sims, spec, [0, 1], compiled)
    Simulator.read_many.__func__(type(sims[0]), sims, spec, [0, 1], one_by_one)
    for ours, theirs in zip(compiled, one_by_one, strict=True):
        np.testing.assert_array_equal(ours, theirs)
