"""``Simulator.step_many``: several simulators advanced in one call (on the in-house engine, one compiled call for
those that share a scene type and dt), each exactly as its own ``step(n)`` would advance it."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import mechgym
from mechgym import SimulationError

BACKENDS = ["mechgym", "mujoco"]
BALL = ('<mujoco><custom><numeric name="restitution:ball" data="1"/></custom><worldbody>'
        '<geom name="floor" type="plane" size="1 1 0.1"/><body name="ball" pos="0 0 0.051">'
        '<freejoint/><geom name="ball" type="sphere" size="0.05" mass="0.2"/></body></worldbody></mujoco>')


def _mixed(backend: str) -> list:
    """Simulators that step_many must batch apart or step alone: two cube drops from different states, a gripper
    closing, a cube drop at another dt, and one with a force window."""
    sims = [mechgym.load("cube_drop", backend=backend, dt=0.002) for _ in range(2)]
    sims[1].reset(qpos=[0.01, -0.02, 0.4, 1, 0, 0, 0], qvel=[0.3, 0, -1.0, 2.0, -1.0, 0.5])
    gripper = mechgym.load("gripper", backend=backend, dt=0.002)
    gripper.ctrl = [-0.07, 0.035, 0.035]
    pushed = mechgym.load("cube_drop", backend=backend, dt=0.002)
    pushed.apply_force("cube", [0.05, 0.0, 0.0], start=0.05, stop=0.15)
    return [*sims, gripper, mechgym.load("cube_drop", backend=backend, dt=0.001), pushed]


def _trace(sim) -> tuple:
    return sim.time, sim.qpos.tolist(), sim.qvel.tolist(), [(e.time, e.geom1, e.geom2, e.speed) for e in sim.events]


@pytest.mark.parametrize("threads", [None, 2])
@pytest.mark.parametrize("backend", BACKENDS)
def test_each_simulator_steps_as_its_own_step_would_bit_for_bit(backend, threads):
    """In one call, or (threads) in shares of the batch of two cube drops on two threads at once."""
    together, alone = _mixed(backend), _mixed(backend)
    executor = ThreadPoolExecutor(threads) if threads else None
    for n in (1, 40, 200):
        assert type(together[0]).step_many(together, n, executor, shares=4) == [None] * len(together)
        for sim in alone:
            sim.step(n)
    assert [_trace(sim) for sim in together] == [_trace(sim) for sim in alone]
    assert together[0].events and together[1].qpos.tolist() != together[0].qpos.tolist()
    if executor is not None:
        executor.shutdown()


def test_a_call_past_the_event_buffer_goes_on_and_keeps_every_impact():
    """An elastic ball on the floor bounces over 1,100 times in 32 s, more impacts than one kernel call records:
    the batched call stops early for it and step_many takes the rest of its steps."""
    together, alone = ([mechgym.load(BALL, backend="mechgym", dt=1e-3) for _ in range(2)] for _ in range(2))
    together[1].reset(qpos=[0, 0, 0.0508, 1, 0, 0, 0])
    alone[1].reset(qpos=[0, 0, 0.0508, 1, 0, 0, 0])
    assert type(together[0]).step_many(together, 32000) == [None, None]
    for sim in alone:
        sim.step(32000)
    assert len(together[0].events) > 1024 and len(together[1].events) > 1024
    assert [_trace(sim) for sim in together] == [_trace(sim) for sim in alone]


def test_a_failing_simulator_reports_its_failure_and_the_others_go_on():
    sims = [mechgym.load("cube_drop", backend="mechgym", dt=0.002) for _ in range(3)]
    sims[1]._state.vel[0, 0, 2] = np.nan  # (the engine's own state: no step of it can be finite)
    messages = type(sims[0]).step_many(sims, 10)
    assert messages[0] is None and messages[2] is None and "became non-finite" in messages[1]
    assert [sim.time for sim in sims] == [0.02, 0.0, 0.02]
    messages = type(sims[0]).step_many(sims, 10)  # failed before: refused, the others step
    assert "failed earlier" in messages[1] and [sim.time for sim in sims] == [0.04, 0.0, 0.04]
    with pytest.raises(SimulationError, match="failed earlier"):
        sims[1].step(1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_steps_or_controls_raise_before_any_simulator_steps(backend):
    sims = [mechgym.load("gripper", backend=backend, dt=0.002) for _ in range(3)]
    sims[2].ctrl = [0.0, np.nan, 0.0]
    with pytest.raises(ValueError, match="non-finite"):
        type(sims[0]).step_many(sims, 5)
    with pytest.raises(ValueError, match="non-negative integer"):
        type(sims[0]).step_many(sims[:2], -1)
    assert [sim.time for sim in sims] == [0.0, 0.0, 0.0]


def test_simulators_of_another_backend_are_refused_by_name():
    engine, mujoco = (mechgym.load("cube_drop", backend=b, dt=0.002) for b in BACKENDS)
    with pytest.raises(TypeError, match="'mechgym' simulators only"):
        type(engine).step_many([engine, mujoco], 5)
    with pytest.raises(TypeError, match="'mujoco' simulators only"):
        type(mujoco).step_many([mujoco, engine], 5)
    assert engine.time == mujoco.time == 0.0
