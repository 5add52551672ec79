"""The environment contract, for every environment on both backends: spaces, control split, time limit in
seconds, determinism, info, bad input, clipping, failures and rendering."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import warnings
from importlib import resources

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gymnasium_check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env
from stable_baselines3.common.utils import check_for_correct_spaces

import mechgym
from mechgym.errors import SimulationError

ENV_IDS = sorted(mechgym.ENVIRONMENTS)
BACKENDS = ("mechgym", "mujoco")
# (physics_dt, decimation) grids per env: the default, a finer physics step, a coarser control split
GRIDS = {
    "mechgym/CubeDrop-v0": [(0.002, 10), (0.001, 5), (0.004, 2)],
    "mechgym/Gripper-v0": [(0.002, 10), (0.001, 4), (0.002, 3)],
    "mechgym/SliderCrank-v0": [(1e-4, 10), (5e-5, 4), (2e-4, 3)],
}
# an episode short enough that zero actions end in no task failure on either backend
SHORT = {"mechgym/CubeDrop-v0": 0.2, "mechgym/Gripper-v0": 0.2, "mechgym/SliderCrank-v0": 0.02}


def make(env_id: str, backend: str, **kwargs) -> gym.Env:
    return gym.make(env_id, backend=backend, **kwargs)


def rollout(env: gym.Env, actions: np.ndarray, seed: int) -> list:
    observation, info = env.reset(seed=seed)
    trace = [(observation, info)]
    for action in actions:
        observation, reward, terminated, truncated, info = env.step(action)
        trace.append((observation, reward, terminated, truncated, info))
        if terminated or truncated:
            break
    return trace


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_gymnasium_and_sb3_checkers_pass_on_a_grid_of_steps(env_id, backend):
    for physics_dt, decimation in GRIDS[env_id]:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*infinity.*")  # unbounded observations are intended
            env = make(env_id, backend, physics_dt=physics_dt, decimation=decimation, render_mode="rgb_array")
            gymnasium_check_env(env.unwrapped)
            sb3_check_env(make(env_id, backend, physics_dt=physics_dt, decimation=decimation), warn=True)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_spaces_are_identical_for_every_backend_and_control_split(env_id):
    envs = [make(env_id, backend, physics_dt=dt, decimation=k) for backend in BACKENDS for dt, k in GRIDS[env_id]]
    reference = envs[0]
    for env in envs:
        assert env.observation_space == reference.observation_space
        assert env.action_space == reference.action_space
        assert env.observation_space.dtype == np.float32 and env.action_space.dtype == np.float32
        np.testing.assert_array_equal(env.action_space.low, -1.0)
        np.testing.assert_array_equal(env.action_space.high, 1.0)
        check_for_correct_spaces(env, reference.observation_space, reference.action_space)  # what SB3's load checks


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_registered_without_a_step_limit_and_made_without_time_limit_wrapper(env_id):
    assert gym.spec(env_id).max_episode_steps is None
    env = make(env_id, "mujoco")
    wrapper = env
    while isinstance(wrapper, gym.Wrapper):
        assert not isinstance(wrapper, gym.wrappers.TimeLimit)
        wrapper = wrapper.env


def test_the_module_prefix_form_imports_mechgym_itself():
    script = ("import gymnasium, sys; assert 'mechgym' not in sys.modules\n"
              "env = gymnasium.make('mechgym:mechgym/CubeDrop-v0', backend='mujoco'); env.reset(seed=0)\n"
              "print(env.unwrapped.dt)")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert float(result.stdout) == pytest.approx(0.02)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_the_control_period_is_physics_dt_times_decimation_and_the_attributes_say_so(env_id, backend):
    physics_dt, decimation = GRIDS[env_id][1]
    env = make(env_id, backend, physics_dt=physics_dt, decimation=decimation, time_limit=0.5)
    unwrapped = env.unwrapped
    assert (unwrapped.physics_dt, unwrapped.decimation, unwrapped.backend, unwrapped.time_limit) == (
        physics_dt, decimation, backend, 0.5)
    assert unwrapped.dt == physics_dt * decimation
    assert unwrapped.sim.dt == physics_dt
    assert unwrapped.metadata["render_fps"] == round(1 / unwrapped.dt)
    env.reset(seed=0)
    _, _, _, _, info = env.step(np.zeros(env.action_space.shape))
    assert unwrapped.sim.step_count == decimation  # one step of the env is `decimation` physics steps
    assert info["time"] == decimation * physics_dt


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize("decimation", [1, 2, 5])
def test_an_episode_lasts_its_time_limit_in_seconds_whatever_the_decimation(env_id, backend, decimation):
    physics_dt = GRIDS[env_id][0][0]
    limit = SHORT[env_id]
    env = make(env_id, backend, physics_dt=physics_dt, decimation=decimation, time_limit=limit)
    steps = math.ceil(round(limit / physics_dt / decimation, 9))
    trace = rollout(env, np.zeros((10 * steps, *env.action_space.shape)), seed=1)
    *_, (_, _, terminated, truncated, info) = trace
    assert len(trace) - 1 == steps
    assert truncated and not terminated and info["failure"] is None
    assert info["time"] == pytest.approx(limit, rel=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_time_limit_between_control_steps_ends_at_the_first_step_past_it(backend):
    env = make("mechgym/CubeDrop-v0", backend, time_limit=0.05)  # dt = 0.02 s
    trace = rollout(env, np.zeros((10, 3)), seed=0)
    assert len(trace) - 1 == 3 and trace[-1][3]
    assert trace[-1][4]["time"] == pytest.approx(0.06)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_same_seed_same_settings_bit_identical_episodes(env_id, backend):
    actions = np.random.default_rng(7).uniform(-1, 1, size=(25, *make(env_id, "mujoco").action_space.shape))
    first = rollout(make(env_id, backend), actions, seed=3)
    again_env = make(env_id, backend)
    rollout(again_env, actions[:5], seed=11)  # an episode in between must not matter
    second = rollout(again_env, actions, seed=3)
    assert len(first) == len(second)
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a[0], b[0])
        assert a[1:-1] == b[1:-1]
        assert a[-1] == b[-1]
    other = rollout(make(env_id, backend), actions[:1], seed=4)
    assert not np.array_equal(other[0][0], first[0][0])  # the start is drawn from the seed


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_info_holds_the_settings_time_each_reward_term_success_and_failure(env_id, backend):
    env = make(env_id, backend)
    terms = [f"reward_{name}" for name in (*env.unwrapped.reward_terms, "failure")]
    keys = {"physics_dt", "decimation", "backend", "time", "is_success", "failure", *terms}
    _, info = env.reset(seed=0)
    assert set(info) == keys and info["time"] == 0.0
    for _ in range(3):
        _, reward, _, _, info = env.step(env.action_space.sample())
        assert set(info) == keys
        assert (info["physics_dt"], info["decimation"], info["backend"]) == (
            env.unwrapped.physics_dt, env.unwrapped.decimation, backend)
        assert reward == pytest.approx(sum(info[t] for t in terms))
        assert info["failure"] is None and info["is_success"] is False


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_non_finite_actions_are_refused_naming_the_index(env_id, backend):
    env = make(env_id, backend)
    env.reset(seed=0)
    size = env.action_space.shape[0]
    for bad in (np.nan, np.inf, -np.inf):
        action = np.zeros(size)
        action[size - 1] = bad
        with pytest.raises(ValueError, match=rf"action\[{size - 1}\]"):
            env.step(action)
    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros(size + 1))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_out_of_range_actions_are_clipped_to_the_box(env_id, backend):
    size = make(env_id, "mujoco").action_space.shape[0]
    wild = np.array([[5.0, -7.0, 3.0][:size]] * 3)
    clipped = np.clip(wild, -1, 1)
    a, b = rollout(make(env_id, backend), wild, seed=2), rollout(make(env_id, backend), clipped, seed=2)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x[0], y[0])
        assert x[1:] == y[1:]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_bad_settings_raise_value_errors_naming_the_argument(env_id):
    for physics_dt in (0, -0.001, float("nan"), float("inf"), "0.002", True):
        with pytest.raises(ValueError, match="physics_dt"):
            make(env_id, "mujoco", physics_dt=physics_dt)
    for decimation in (0, -1, 2.5, 10.0, True, "10"):
        with pytest.raises(ValueError, match="decimation"):
            make(env_id, "mujoco", decimation=decimation)
    for limit in (0, -1.0, float("inf")):
        with pytest.raises(ValueError, match="time_limit"):
            make(env_id, "mujoco", time_limit=limit)
    with pytest.raises(ValueError, match="backend"):
        make(env_id, "bullet")
    with pytest.raises(ValueError, match="render_mode"):
        make(env_id, "mujoco", render_mode="rgb")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_rgb_array_frames_are_non_blank_uint8_images_of_the_state(env_id, backend):
    env = make(env_id, backend, render_mode="rgb_array", render_size=(160, 120))
    env.reset(seed=0)
    first = env.render()
    assert first.shape == (120, 160, 3) and first.dtype == np.uint8
    assert first.std() > 5.0 and len(np.unique(first.reshape(-1, 3), axis=0)) > 50
    policy = env.unwrapped.scripted_policy()
    observation, *_ = env.step(policy(env.unwrapped._observation.astype(np.float32)))
    for _ in range(20):
        observation, *_ = env.step(policy(observation))
    assert not np.array_equal(env.render(), first)  # the picture follows the state
    env.close()


def test_render_without_a_render_mode_returns_none():
    env = make("mechgym/CubeDrop-v0", "mujoco")
    env.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert env.render() is None


def test_both_backends_draw_the_same_picture_of_the_same_state():
    frames = []
    for backend in BACKENDS:
        env = make("mechgym/Gripper-v0", backend, render_mode="rgb_array", render_size=(160, 120))
        env.reset(seed=5)
        frames.append(env.render())
    np.testing.assert_array_equal(*frames)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_backend_failure_truncates_the_episode_as_diverged_without_penalty_and_reset_recovers(env_id,
                                                                                              monkeypatch):
    env = make(env_id, "mechgym")
    env.reset(seed=0)
    sim = env.unwrapped.sim
    real_step = sim.step

    def failing_step(n):
        sim._fail("an injected failure")

    monkeypatch.setattr(sim, "step", failing_step)
    observation, reward, terminated, truncated, info = env.step(np.zeros(env.action_space.shape))
    assert truncated and not terminated
    assert info["failure"] == "diverged" and "injected" in info["error"]
    assert reward == info["reward_failure"] == 0.0
    assert np.isfinite(observation).all()
    monkeypatch.setattr(sim, "step", real_step)
    env.reset(seed=0)
    _, _, terminated, _, info = env.step(np.zeros(env.action_space.shape))
    assert info["failure"] is None and not terminated


def test_a_non_finite_observation_is_a_divergence(monkeypatch):
    env = make("mechgym/CubeDrop-v0", "mujoco")
    env.reset(seed=0)
    monkeypatch.setattr(env.unwrapped.sim, "frames", lambda bodies, out: out.fill(np.nan))  # the cube's readings
    observation, _, _, truncated, info = env.step(np.zeros(3))
    assert truncated and info["failure"] == "diverged" and np.isfinite(observation).all()


def test_an_engine_that_cannot_take_the_step_ends_the_episode_cleanly():
    """A real engine failure: the cube's free joint damped at 1e7 N s/m, h d / 2m = 1e5 at 2 ms and still 98 in
    parts of dt / 1024, beyond the closing kick's fixed-point iteration. The env reports it instead of raising,
    and resets."""
    from mechgym.envs.cube_drop import CubeDropEnv

    class OverdampedCubeDrop(CubeDropEnv):
        scene = (resources.files("mechgym.envs") / "cube_drop.xml").read_text().replace(
            '<freejoint name="cube_free"/>', '<joint name="cube_free" type="free" damping="1e7"/>')

    env = OverdampedCubeDrop("mechgym")
    env.reset(seed=4)
    with pytest.raises(SimulationError):
        env.sim.step(1)  # the simulator itself raises ...
    env.reset(seed=4)
    _, _, terminated, truncated, info = env.step(np.zeros(env.action_space.shape))  # ... the env does not
    assert truncated and info["failure"] == "diverged" and "did not converge" in info["error"]
    observation, _ = env.reset(seed=1)
    assert np.isfinite(observation).all() and env.time == 0.0


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_make_vec_runs_the_env_in_gymnasium_vector_envs(env_id, mode):
    envs = gym.make_vec(env_id, num_envs=2, vectorization_mode=mode, backend="mujoco")
    observations, infos = envs.reset(seed=10)
    single = make(env_id, "mujoco")
    np.testing.assert_array_equal(observations[1], single.reset(seed=11)[0])  # env i is seeded with seed + i
    for _ in range(3):
        observations, rewards, terminated, truncated, infos = envs.step(envs.action_space.sample())
    assert observations.shape == (2, *single.observation_space.shape) and rewards.shape == (2,)
    assert list(infos["backend"]) == ["mujoco", "mujoco"]
    envs.close()


def test_make_vec_on_the_in_house_engine():
    envs = gym.make_vec("mechgym/CubeDrop-v0", num_envs=2, vectorization_mode="sync", backend="mechgym")
    observations, _ = envs.reset(seed=0)
    for _ in range(3):
        observations, *_ = envs.step(np.zeros((2, 3)))
    assert np.isfinite(observations).all()
    envs.close()


def test_rendering_after_mujoco_chose_glfw_without_a_display_is_a_clear_error():
    script = ("import mujoco, mechgym, gymnasium\n"
              "env = gymnasium.make('mechgym/CubeDrop-v0', backend='mujoco', render_mode='rgb_array')\n"
              "env.reset(seed=0)\n"
              "try:\n    env.render()\nexcept RuntimeError as error:\n    print(error)\n")
    environment = {k: v for k, v in os.environ.items() if k not in ("MUJOCO_GL", "DISPLAY")}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=environment)
    assert result.returncode == 0, result.stderr
    assert "set MUJOCO_GL=egl" in result.stdout


def test_a_model_saved_on_one_backend_and_control_split_loads_and_acts_on_another(tmp_path):
    from stable_baselines3 import PPO

    trained_on = make("mechgym/CubeDrop-v0", "mujoco", physics_dt=0.004, decimation=5)
    model = PPO("MlpPolicy", trained_on, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=32)
    model.save(tmp_path / "ppo")
    evaluated_on = make("mechgym/CubeDrop-v0", "mechgym", physics_dt=0.001, decimation=20)
    loaded = PPO.load(tmp_path / "ppo", env=evaluated_on, device="cpu")  # checks the spaces, bounds included
    observation, _ = evaluated_on.reset(seed=0)
    action, _ = loaded.predict(observation, deterministic=True)
    evaluated_on.step(action)
