"""Simulator.reset(qpos, qvel, ctrl): an initial state of one's choosing, on both backends."""

from __future__ import annotations

import numpy as np
import pytest

import mechgym

BACKENDS = ("mechgym", "mujoco")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("scene", ["gripper", "slider_crank", "cube_drop"])
def test_reset_puts_the_given_state_and_the_continuation_is_reproducible(scene, backend):
    sim = mechgym.load(scene, backend=backend)
    rng = np.random.default_rng(0)
    qpos = sim.model.qpos0.copy()
    qvel = rng.uniform(-0.1, 0.1, size=sim.model.nv)
    if scene == "slider_crank":
        qpos = rng.uniform(-0.01, 0.01, size=3)
    else:
        qpos[2] += 0.05  # lift the free body off whatever it stands on
    ctrl = np.array([rng.uniform(lo, hi) for lo, hi in sim.model.actuator_ctrlrange])
    sim.step(3)
    sim.reset(qpos=qpos, qvel=qvel, ctrl=ctrl)
    assert sim.time == 0.0 and sim.step_count == 0 and sim.events == []
    np.testing.assert_allclose(sim.qpos, qpos, atol=1e-12)
    np.testing.assert_allclose(sim.qvel, qvel, atol=1e-12)
    np.testing.assert_array_equal(sim.ctrl, ctrl)
    sim.step(20)
    after = sim.qpos
    sim.reset(qpos=qpos, qvel=qvel, ctrl=ctrl)
    sim.step(20)
    np.testing.assert_array_equal(sim.qpos, after)


@pytest.mark.parametrize("backend", BACKENDS)
def test_reset_without_arguments_is_the_keyframe(backend):
    sim = mechgym.load("slider_crank", backend=backend)
    sim.reset(qvel=np.zeros(3))
    sim.reset()
    np.testing.assert_allclose(sim.qvel, sim.model.key_qvel[0], atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_free_joint_quaternions_are_normalised(backend):
    sim = mechgym.load("cube_drop", backend=backend)
    sim.reset(qpos=[0, 0, 1.0, 2.0, 0, 0, 2.0])
    np.testing.assert_allclose(sim.body("cube").quat, [np.sqrt(0.5), 0, 0, np.sqrt(0.5)], atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_initial_states_are_refused_by_name(backend):
    sim = mechgym.load("cube_drop", backend=backend)
    with pytest.raises(ValueError, match=r"qpos must have shape \(7,\)"):
        sim.reset(qpos=np.zeros(6))
    with pytest.raises(ValueError, match="qvel holds non-finite values at indices \\[2\\]"):
        sim.reset(qvel=[0, 0, np.nan, 0, 0, 0])
    with pytest.raises(ValueError, match="ctrl"):
        sim.reset(ctrl=[0, 0])
    with pytest.raises(ValueError, match=r"qpos\[3:7\], the quaternion of joint 'cube_free', is zero"):
        sim.reset(qpos=[0, 0, 1, 0, 0, 0, 0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_readings_follow_every_change_of_state_and_cannot_change_it(backend):
    # Each state is converted once (qpos, qvel, body states), however often it is read: every reading must
    # still follow a step, set_state or reset, and no caller can change what the next one reads.
    sim = mechgym.load("slider_crank", backend=backend, dt=1e-4)
    start = sim.get_state()

    def readings():
        slider = sim.body("slider")
        return sim.qpos, sim.qvel, np.concatenate((slider.pos, slider.quat, slider.linvel, slider.angvel))

    first = readings()
    sim.qpos[:] = 7.0  # qpos and qvel are the caller's copies
    sim.qvel[:] = 7.0
    with pytest.raises(ValueError, match="read-only"):
        sim.body("slider").pos[0] = 7.0
    for now, then in zip(readings(), first, strict=True):
        np.testing.assert_array_equal(now, then)
    sim.step(5)
    moved = readings()
    for now, then in zip(moved, first, strict=True):
        assert not np.array_equal(now, then)
    for no_steps in (lambda: None, lambda: sim.step(0), lambda: type(sim).step_many([sim], 0)):
        sim.step(5)  # (the engine's reading arrays hold the moved state)
        sim.set_state(start)
        no_steps()
        for now, then in zip(readings(), first, strict=True):
            np.testing.assert_array_equal(now, then)
    sim.step(5)
    for now, then in zip(readings(), moved, strict=True):
        np.testing.assert_array_equal(now, then)
    sim.reset(qpos=[0.005, -0.003, 0.002], qvel=[0.0, 0.0, 0.0])
    np.testing.assert_allclose(sim.qpos, [0.005, -0.003, 0.002], atol=1e-12)
    np.testing.assert_array_equal(sim.qvel, np.zeros(3))
    assert not np.array_equal(readings()[2], moved[2])


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_derived_reading_is_computed_once_per_state(backend):
    # Simulator.derived keeps a task's reading until the state changes: by a step (alone or in step_many),
    # set_state or reset.
    sim = mechgym.load("slider_crank", backend=backend, dt=1e-4)
    start = sim.get_state()
    calls = []

    def slider_x():
        calls.append(sim.step_count)
        return float(sim.body("slider").pos[0])

    first = sim.derived(slider_x)
    assert sim.derived(slider_x) == first and calls == [0]
    sim.step(5)
    moved = sim.derived(slider_x)
    assert moved != first and sim.derived(slider_x) == moved and calls == [0, 5]
    type(sim).step_many([sim], 5)
    assert sim.derived(slider_x) not in (first, moved) and calls == [0, 5, 10]
    sim.set_state(start)
    assert sim.derived(slider_x) == first and calls == [0, 5, 10, 0]
    sim.step(5)
    sim.reset()
    assert sim.derived(slider_x) == first and calls == [0, 5, 10, 0, 0]
