"""mechgym/CubeDrop-v0: the passive drop is seed 003's, the failure detectors' thresholds, and a hand-written
descent controller that lands the cube."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import mechgym
from mechgym.robustness.cube_drop import DT_MS, DURATION, run_drop
from mechgym.rollout import run_episodes, summary

BACKENDS = ("mechgym", "mujoco")


def make(backend: str, **kwargs) -> gym.Env:
    return gym.make("mechgym/CubeDrop-v0", backend=backend, **kwargs)


def place(env: gym.Env, pos, vel=(0.0, 0.0, 0.0)) -> tuple[np.ndarray, float]:
    """Put the cube (upright) at ``pos`` moving at ``vel``; return its centre and speed as the env reads them."""
    sim = env.unwrapped.sim
    sim.reset(qpos=[*pos, 1, 0, 0, 0], qvel=[*vel, 0, 0, 0])
    cube = sim.body("cube")
    return cube.pos, float(np.linalg.norm(cube.linvel))


@pytest.mark.parametrize("backend", BACKENDS)
def test_zero_thrust_without_randomisation_repeats_the_sweeps_drop_state_for_state(backend):
    env = make(backend, randomize=False, physics_dt=0.004, decimation=5, time_limit=1.0)
    observation, _ = env.reset(seed=0)
    reference = mechgym.load("cube_drop", backend=backend, dt=0.004)
    rest = env.unwrapped.rest_height
    assert observation[2] == np.float32(reference.body("cube").pos[2] - rest)
    for _ in range(50):
        observation, *_ = env.step(np.zeros(3))
        reference.step(5)
        assert observation[2] == np.float32(reference.body("cube").pos[2] - rest)
        np.testing.assert_array_equal(observation[7:10], reference.body("cube").linvel.astype(np.float32))


@pytest.mark.parametrize("dt_ms", DT_MS)
def test_the_passive_drop_on_mujoco_tunnels_exactly_where_the_sweep_says_it_fell(dt_ms):
    """Seed 003's failure kinds become the env's: a drop that fell (missed or wrong-side contact, too soft a
    contact) ends in "tunnelled"; one that stayed does not fail."""
    dt = dt_ms / 1000
    env = make("mujoco", randomize=False, physics_dt=dt, decimation=1, time_limit=DURATION)
    observation, _ = env.reset(seed=0)
    while True:
        observation, _, terminated, truncated, info = env.step(np.zeros(3))
        if terminated or truncated:
            break
    fell = not run_drop("mujoco", dt).stayed
    assert (info["failure"] == "tunnelled") is fell
    if not fell:
        assert info["failure"] is None


@pytest.mark.slow
@pytest.mark.parametrize("dt_ms", DT_MS)
def test_the_passive_drop_on_the_in_house_engine_rests_on_the_slab_at_every_step(dt_ms):
    dt = dt_ms / 1000
    env = make("mechgym", randomize=False, physics_dt=dt, decimation=1, time_limit=DURATION)
    env.reset(seed=0)
    while True:
        _, _, terminated, truncated, info = env.step(np.zeros(3))
        if terminated or truncated:
            break
    assert info["is_success"] and info["failure"] is None and terminated


@pytest.mark.parametrize("backend", BACKENDS)
def test_tunnelled_means_below_the_mid_plane_inside_the_footprint_after_being_above_it(backend):
    env = make(backend)
    env.reset(seed=0)
    task = env.unwrapped
    mid, half = task.slab_mid_plane, task.slab_half[0]
    assert task.detect_failure(*place(env, (0.05, 0.0, mid + 1e-4))) is None  # above the mid-plane
    assert task.detect_failure(*place(env, (0.05, 0.0, mid - 1e-4))) == "tunnelled"
    # beside the slab, below its mid-plane, then under it: flew round, did not go through
    env.reset(seed=0)
    assert task.detect_failure(*place(env, (0.05, 0.0, mid + 0.01))) is None
    assert task.detect_failure(*place(env, (half + 1e-4, 0.0, mid - 0.01))) is None
    assert task.detect_failure(*place(env, (half - 1e-4, 0.0, mid - 0.01))) is None
    # the footprint's edge, from above
    env.reset(seed=0)
    assert task.detect_failure(*place(env, (half - 1e-4, 0.0, mid + 0.01))) is None
    assert task.detect_failure(*place(env, (half - 1e-4, 0.0, mid - 0.01))) == "tunnelled"


@pytest.mark.parametrize("backend", BACKENDS)
def test_floor_means_at_rest_on_the_floor(backend):
    env = make(backend)
    env.reset(seed=0)
    task = env.unwrapped
    low = task.cube_half + 0.005
    beside = task.slab_half[0] + 0.2
    assert task.detect_failure(*place(env, (beside, 0.0, low - 1e-4), (0.049, 0, 0))) == "floor"
    assert task.detect_failure(*place(env, (beside, 0.0, low + 1e-4), (0.049, 0, 0))) is None
    assert task.detect_failure(*place(env, (beside, 0.0, low - 1e-4), (0.051, 0, 0))) is None


@pytest.mark.parametrize("backend", BACKENDS)
def test_at_rest_on_the_slab_thresholds(backend):
    env = make(backend)
    env.reset(seed=0)
    task = env.unwrapped
    rest, half = task.rest_height, task.slab_half[0]
    assert task.at_rest_on_slab(np.array([0.1, 0.0, rest + 0.0019]), 0.019, 0.19)
    assert not task.at_rest_on_slab(np.array([0.1, 0.0, rest + 0.0021]), 0.0, 0.0)
    assert not task.at_rest_on_slab(np.array([half + 1e-4, 0.0, rest]), 0.0, 0.0)
    assert not task.at_rest_on_slab(np.array([0.0, 0.0, rest]), 0.021, 0.0)
    assert not task.at_rest_on_slab(np.array([0.0, 0.0, rest]), 0.0, 0.21)


def test_the_randomised_start_covers_the_stated_ranges():
    env = make("mujoco")
    starts = np.array([env.reset(seed=seed)[0] for seed in range(200)])
    rest = env.unwrapped.rest_height
    radius = np.linalg.norm(starts[:, :2], axis=1)
    assert radius.max() <= 0.25 and radius.max() > 0.2 and (radius > env.unwrapped.slab_half[0]).any()
    heights = starts[:, 2] + rest
    assert heights.min() >= 1.0 and heights.max() <= 1.5 and np.ptp(heights) > 0.4
    assert np.abs(starts[:, 7:10]).max() <= 0.2 and np.all(starts[:, 10:13] == 0)
    tilt = 2 * np.arccos(np.clip(np.sqrt(starts[:, 3] ** 2 + starts[:, 6] ** 2), 0, 1))  # away from the z axis
    assert tilt.max() <= 0.1 + 1e-6 and tilt.max() > 0.05


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_descent_controller_lands_the_cube_from_every_start(backend):
    env = make(backend)
    result = summary(list(run_episodes(env, env.unwrapped.scripted_policy(), first_seed=100, episodes=10)))
    assert result["successes"] == 10, result


@pytest.mark.parametrize("physics_dt", [0.005, 0.01])
def test_on_the_in_house_engine_the_landed_cube_comes_to_rest_at_larger_steps(physics_dt):
    """The demo's steps beyond the training one (control period 20 ms held): the controller's landings rest. At
    3a7d42e 3 of these 10 episodes at 5 ms and 4 at 10 ms ran to the time limit, the landed cube rocking from edge
    to edge in a two-step cycle at 0.20-0.22 rad/s, just over the success threshold."""
    env = make("mechgym", physics_dt=physics_dt, decimation=round(0.02 / physics_dt))
    result = summary(list(run_episodes(env, env.unwrapped.scripted_policy(), first_seed=0, episodes=10)))
    assert result["successes"] == 10, result


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_impact_term_is_minus_half_the_squared_speeds_of_the_steps_cube_impacts(backend):
    """The passive drop bounces on the slab: each step's impact term is -0.5 sum v^2 over the cube's impacts that
    the simulator recorded in that step's control period, and the bounce is in it."""
    env = make(backend, randomize=False, decimation=1)
    env.reset(seed=0)
    sim, charged = env.unwrapped.sim, 0
    for _ in range(400):
        seen = len(sim.events)
        _, _, terminated, truncated, info = env.step(np.zeros(3))
        speeds = [event.speed for event in sim.events[seen:] if "cube" in (event.geom1, event.geom2)]
        assert info["reward_impact"] == pytest.approx(-0.5 * sum(v * v for v in speeds), rel=1e-15, abs=0.0)
        charged += bool(speeds)
        if terminated or truncated:
            break
    assert charged >= 1
