"""The native vector env (mechgym.vector): the same transitions as Gymnasium's SyncVectorEnv over single
envs, for every env, both backends and every autoreset mode; failures of one episode; bad input."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from numba import njit

import mechgym
from mechgym.compiled import CompiledTask
from mechgym.env import MechEnv, StepOutcome
from mechgym.errors import SceneError, SimulationError
from mechgym.simulator import FRAME_LINVEL, FRAME_POS
from mechgym.steps import FAILURE, SUCCESS, Steps
from mechgym.vector import MechVectorEnv

ENV_IDS = sorted(mechgym.ENVIRONMENTS)
# episodes short enough that a 40-step run ends (and autoresets) several of them
TIME_LIMIT = {"mechgym/CubeDrop-v0": 0.3, "mechgym/Gripper-v0": 0.3, "mechgym/SliderCrank-v0": 0.01}
STEPS, N = 40, 3


def assert_same(a, b, where="") -> None:
    """Equal, bit for bit, through tuples, dicts, object arrays and arrays (None and strings compared as values)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), f"{where}: keys {set(a) ^ set(b)}"
        for key in a:
            assert_same(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, tuple | list) or (isinstance(a, np.ndarray) and a.dtype == object):
        assert type(b) is type(a) and len(b) == len(a), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b), f"{where}: {a} != {b}"
    else:
        assert type(a) is type(b) and a == b, f"{where}: {a!r} != {b!r}"


def pair(env_id: str, backend: str, mode: AutoresetMode, num_envs: int = N, threads: int | None = None, **kwargs):
    kwargs = {"backend": backend, "time_limit": TIME_LIMIT[env_id], **kwargs}
    native = gym.make_vec(env_id, num_envs=num_envs, autoreset_mode=mode, threads=threads, **kwargs)
    sync = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="sync",
                        vector_kwargs={"autoreset_mode": mode}, **kwargs)
    return native, sync


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
@pytest.mark.parametrize("backend", ["mechgym", "mujoco"])
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_the_native_vector_env_steps_exactly_as_sync_vector_env(env_id, backend, mode):
    native, sync = pair(env_id, backend, mode)
    assert isinstance(native.unwrapped, MechVectorEnv) and isinstance(sync, SyncVectorEnv)
    assert native.metadata["autoreset_mode"] == mode
    assert native.observation_space == sync.observation_space and native.action_space == sync.action_space
    assert_same(native.reset(seed=7), sync.reset(seed=7), "reset")
    rng = np.random.default_rng(1)
    ends = 0
    for k in range(STEPS):
        actions = rng.uniform(-1.2, 1.2, size=native.action_space.shape)  # some out of range: clipped
        ours, theirs = native.step(actions), sync.step(actions)
        assert_same(ours, theirs, f"step {k}")
        ends += int(np.sum(ours[2] | ours[3]))
    assert ends >= N  # every episode ended at least once: the autoreset paths ran
    native.close()
    sync.close()



@pytest.mark.parametrize("backend", ["mechgym", "mujoco"])
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_episodes_stepped_and_concluded_in_one_call_on_one_thread_step_exactly_as_sync_vector_env(env_id, backend):
    """16 episodes on one thread: their physics in one call and their evaluation in one call of the task's kernel,
    rows of a batch that a single env fills alone."""
    native, sync = pair(env_id, backend, AutoresetMode.NEXT_STEP, num_envs=16, threads=1)
    assert_same(native.reset(seed=3), sync.reset(seed=3), "reset")
    rng = np.random.default_rng(4)
    for k in range(25):
        actions = rng.uniform(-1.0, 1.0, size=native.action_space.shape)
        assert_same(native.step(actions), sync.step(actions), f"step {k}")
    native.close()
    sync.close()

def test_with_autoreset_disabled_ended_episodes_are_reset_by_mask_and_stepping_them_first_is_refused():
    native, sync = pair("mechgym/CubeDrop-v0", "mujoco", AutoresetMode.DISABLED)
    assert_same(native.reset(seed=3), sync.reset(seed=3))
    actions = np.zeros(native.action_space.shape)
    for _ in range(15):  # the time limit: every episode truncated at once
        ours, theirs = native.step(actions), sync.step(actions)
        assert_same(ours, theirs)
    assert ours[3].all()
    with pytest.raises(gym.error.ResetNeeded, match=r"episodes \[0, 1, 2\] ended"):
        native.step(actions)
    mask = np.array([True, False, True])
    assert_same(native.reset(options={"reset_mask": mask}), sync.reset(options={"reset_mask": mask}))
    with pytest.raises(ValueError, match="reset_mask"):
        native.reset(options={"reset_mask": np.zeros(N, dtype=bool)})


def test_reset_seeds_episode_i_with_seed_plus_i():
    native = gym.make_vec("mechgym/CubeDrop-v0", num_envs=N, backend="mujoco")
    observations, _ = native.reset(seed=11)
    for i in range(N):
        single, _ = gym.make("mechgym/CubeDrop-v0", backend="mujoco").reset(seed=11 + i)
        assert np.array_equal(observations[i], single)
    assert len({tuple(o) for o in observations}) == N


def test_an_episode_whose_observation_is_not_finite_ends_alone_with_its_last_observation(monkeypatch):
    """Its simulator went through, but the readings of its step make no finite observation: diverged, truncated, no
    reward, its last finite observation and its task memory as they were; the other episodes of its group go on."""
    native = gym.make_vec("mechgym/SliderCrank-v0", num_envs=4, backend="mechgym", threads=1).unwrapped
    native.reset(seed=0)
    zeros = np.zeros(native.action_space.shape)
    before = native.step(zeros)[0]  # (the task's memory: a ring of crank angles, written every step)
    victim, engine = native.envs[2], type(native.envs[2].sim)
    read_many = engine.read_many

    def poisoned(simulators, spec, rows, out):
        read_many(simulators, spec, rows, out)
        for simulator, row in zip(simulators, rows, strict=True):
            if simulator is victim.sim:
                out.frames[row] = np.nan

    monkeypatch.setattr(engine, "read_many", poisoned)
    memory, others = victim._memory.copy(), native.envs[0]._memory.copy()
    observations, rewards, terminated, truncated, info = native.step(zeros)
    assert truncated.tolist() == [False, False, True, False] and not terminated.any() and rewards[2] == 0.0
    assert info["failure"][2] == "diverged" and "became non-finite" in info["error"][2]
    assert [info["failure"][i] for i in (0, 1, 3)] == [None] * 3 and info["_error"].tolist() == [0, 0, 1, 0]
    np.testing.assert_array_equal(observations[2], before[2])
    np.testing.assert_array_equal(victim._memory, memory)
    assert not np.array_equal(native.envs[0]._memory, others)
    assert np.isfinite(observations).all() and not np.array_equal(observations[0], before[0])


@pytest.mark.parametrize(("num_envs", "threads"), [(N, 1), (N, 2), (12, 2)])  # (12, 2): four shares of 3
def test_an_episode_whose_simulator_fails_ends_alone_and_the_others_go_on(num_envs, threads):
    native = gym.make_vec("mechgym/CubeDrop-v0", num_envs=num_envs, backend="mechgym", threads=threads).unwrapped
    native.reset(seed=0)
    native.envs[1].sim._state.vel[0, 0, 2] = np.nan  # (in the engine's own state: no step of it can be finite)
    times = [env.sim.time for env in native.envs]
    observations, rewards, terminated, truncated, info = native.step(np.zeros(native.action_space.shape))
    failed = np.arange(num_envs) == 1
    assert truncated.tolist() == failed.tolist() and not terminated.any()
    assert info["failure"][1] == "diverged" and "became non-finite" in info["error"][1]
    assert all(info["failure"][i] is None for i in np.flatnonzero(~failed))
    assert [env.sim.time > t for env, t in zip(native.envs, times, strict=True)] == (~failed).tolist()
    native.step(np.zeros(native.action_space.shape))  # NEXT_STEP: the failed episode starts again
    assert native.envs[1].sim.time == 0.0 and native.envs[0].sim.time > 0.0


def test_bad_actions_raise_before_any_episode_is_stepped_or_its_controls_change():
    native = gym.make_vec("mechgym/Gripper-v0", num_envs=N, backend="mujoco")
    native.reset(seed=0)
    controls = [env.sim.ctrl.copy() for env in native.unwrapped.envs]
    actions = np.ones(native.action_space.shape)
    actions[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"actions\[2, 1\] is nan"):
        native.step(actions)
    size = native.single_action_space.shape[0]
    with pytest.raises(ValueError, match=rf"shape \(3, {size}\)"):
        native.step(np.zeros((N, size + 1)))
    assert all(env.sim.step_count == 0 and np.array_equal(env.sim.ctrl, ctrl)
               for env, ctrl in zip(native.unwrapped.envs, controls, strict=True))


@pytest.mark.parametrize(("keyword", "value", "message"), [
    ("num_envs", 0, "num_envs must be a positive integer"),
    ("threads", 0, "threads must be a positive integer"),
    ("autoreset_mode", "Sometimes", "autoreset_mode must be one of"),
    ("physics_dt", -1.0, "physics_dt must be a positive finite number"),
])
def test_bad_settings_are_named(keyword, value, message):
    kwargs = {"num_envs": 2, "backend": "mujoco", keyword: value}
    with pytest.raises(ValueError, match=message):
        gym.make_vec("mechgym/CubeDrop-v0", **kwargs)


def test_the_task_settings_reach_every_episode_and_threads_do_not_change_results():
    kwargs = {"backend": "mechgym", "physics_dt": 0.001, "decimation": 7, "randomize": False}
    one, two = (gym.make_vec("mechgym/CubeDrop-v0", num_envs=4, threads=t, **kwargs).unwrapped for t in (1, 2))
    assert one.threads == 1 and two.threads == 2
    assert all(env.dt == 0.007 and not env.randomize for env in one.envs)
    rng = np.random.default_rng(0)
    assert_same(one.reset(seed=0), two.reset(seed=0))
    for _ in range(10):
        actions = rng.uniform(-1, 1, size=one.action_space.shape)
        assert_same(one.step(actions), two.step(actions))


def test_render_returns_one_frame_per_episode():
    native = gym.make_vec("mechgym/CubeDrop-v0", num_envs=2, backend="mujoco", render_mode="rgb_array",
                          render_size=(64, 48))
    native.reset(seed=0)
    frames = native.render()
    assert len(frames) == 2 and all(frame.shape == (48, 64, 3) for frame in frames)
    native.close()


def test_a_failed_simulator_is_reported_by_the_single_env_as_before():
    """The single env's step is the vector env's parts in a row (act, the physics, conclude): its failure path is
    unchanged."""
    env = gym.make("mechgym/CubeDrop-v0", backend="mujoco").unwrapped
    env.reset(seed=0)

    def fail(n):
        raise SimulationError("t = 0 s: boom")

    env.sim._advance = fail
    _, reward, terminated, truncated, info = env.step(np.zeros(3))
    assert (reward, terminated, truncated, info["failure"], info["error"]) == (0.0, False, True, "diverged",
                                                                                "t = 0 s: boom")


class ConfinedPuck(MechEnv):
    """A small task on a scene with a confinement: push a puck held inside a tube (rule reflect) towards its
    top; the observation is the puck's position and velocity."""

    scene = """<mujoco><custom><text name="confinement:puck_in_tube"
        data="body=puck surface=tube margin=0.001 rule=reflect restitution=0.8 extent=0.02"/></custom>
      <worldbody><geom name="tube" type="cylinder" size="0.1 0.3" contype="0" conaffinity="0"/>
        <body name="puck"><freejoint/><geom type="sphere" size="0.02" mass="0.1" contype="0" conaffinity="0"/>
          <site name="centre"/></body></worldbody>
      <actuator><general site="centre" gear="1 0 0 0 0 0" ctrlrange="-1 1"/>
        <general site="centre" gear="0 0 1 0 0 0" ctrlrange="-1 1"/></actuator></mujoco>"""
    camera = ""
    default_physics_dt, default_decimation, default_time_limit = 0.002, 5, 0.2
    reward_terms, failure_penalty, task_failures = ("height",), -1.0, ()

    def _action_size(self) -> int:
        return 2

    def _observation_space(self):
        return gym.spaces.Box(-np.inf, np.inf, shape=(6,), dtype=np.float32)

    def _initial_state(self, rng):
        qpos = np.array([*rng.uniform(-0.05, 0.05, 2), 0.0, 1.0, 0.0, 0.0, 0.0])
        return qpos, np.concatenate((rng.normal(size=3), np.zeros(3))), np.zeros(2)

    def _apply_action(self, action):
        self.sim.ctrl = action

    def _observe(self):
        puck = self.sim.body("puck")
        return np.concatenate((puck.pos, puck.linvel))

    def _evaluate(self, action):
        return StepOutcome({"height": float(self.sim.body("puck").pos[2]) * self.dt})


def test_a_confinement_runs_in_the_native_vector_env():
    """The native vector env over a task whose scene holds a confinement steps exactly as SyncVectorEnv over
    single envs; no puck leaves its tube; the MuJoCo backend refuses the scene."""
    native = MechVectorEnv(ConfinedPuck, N)
    sync = SyncVectorEnv([ConfinedPuck for _ in range(N)])
    assert_same(native.reset(seed=5), sync.reset(seed=5), "reset")
    rng = np.random.default_rng(2)
    widest = 0.0
    for k in range(60):
        actions = rng.uniform(-1, 1, size=native.action_space.shape)
        ours = native.step(actions)
        assert_same(ours, sync.step(actions), f"step {k}")
        widest = max(widest, np.hypot(ours[0][:, 0], ours[0][:, 1]).max())
    assert 0.1 - 0.021 - 1e-3 < widest <= 0.1 - 0.021 + 1e-6  # the pucks reached the wall, never beyond
    with pytest.raises(SceneError) as refused:
        ConfinedPuck(backend="mujoco")
    assert refused.value.code == "confinement.unsupported-backend"


@njit(cache=True)
def _puck_kernel(step, rows, parameters, time, qpos, qvel, ctrl, frames, touching, impacts, actions, memory,
                 observations, terms, outcome):
    for i in rows:
        puck = frames[i, 0]
        observations[i, 0:3] = puck[FRAME_POS:FRAME_POS + 3]
        observations[i, 3:6] = puck[FRAME_LINVEL:FRAME_LINVEL + 3]
        if step:
            terms[i, 0] = puck[FRAME_POS + 2] * parameters[0]
            outcome[i, SUCCESS] = outcome[i, FAILURE] = 0


class CompiledPuck(CompiledTask, ConfinedPuck):
    """ConfinedPuck with its observation and reward in a kernel, as a user would write it."""

    kernel = _puck_kernel
    observed_bodies = ("puck",)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._parameters = np.array([self.dt])

    def _begin_episode(self):
        self._memory = np.zeros(0)


def test_a_task_of_ones_own_compiled_steps_exactly_as_its_python_twin():
    """The native vector env over the compiled puck, in groups of two on one thread, against SyncVectorEnv over
    the Python one: the same arithmetic, so the same transitions bit for bit."""
    native = MechVectorEnv(CompiledPuck, 8, threads=1)
    sync = SyncVectorEnv([ConfinedPuck for _ in range(8)])
    assert_same(native.reset(seed=9), sync.reset(seed=9), "reset")
    rng = np.random.default_rng(3)
    for k in range(40):
        actions = rng.uniform(-1, 1, size=native.action_space.shape)
        assert_same(native.step(actions), sync.step(actions), f"step {k}")


@pytest.mark.parametrize("seed", range(8))
def test_infos_are_batched_as_gymnasiums_add_info_batches_the_rows_infos_one_by_one(seed):
    """``Steps.infos`` against Gymnasium's own ``_add_info`` over each listed row's ``Steps.info``: rows with and
    without errors, task failures, DIVERGED, successes, and rows left out of the mask."""
    native = gym.make_vec("mechgym/Gripper-v0", num_envs=6, backend="mujoco").unwrapped
    env, rng = native.envs[0], np.random.default_rng(seed)
    steps = Steps.empty(6, env)
    steps.time[:] = rng.uniform(0, 3, 6)
    steps.terms[:] = rng.normal(size=steps.terms.shape)
    steps.success[:] = rng.random(6) < 0.5
    steps.failure[:] = rng.integers(-1, len(env.task_failures) + 1, 6)
    steps.error[:] = rng.choice(np.array([None, None, "the contact solve did not converge"], dtype=object), 6)
    listed = np.ones(6, dtype=bool) if seed % 2 else rng.random(6) < 0.7
    expected: dict = {}
    for i in np.flatnonzero(listed):
        expected = native._add_info(expected, steps.info(i, env), i)
    assert listed.any() and expected.keys() >= {"time", "failure", "_failure", "reward_failure", "is_success"}
    assert_same(steps.infos(env, listed), expected)


@pytest.mark.parametrize(("outcome", "message"), [
    (StepOutcome({"height": 0.0}, failure="lost"), "returned the failure .lost., which is not one of its task_fail"),
    (StepOutcome({"depth": 0.0}), r"returned the reward terms \['depth'\]; its reward_terms are \['height'\]"),
])
def test_a_python_task_whose_evaluation_does_not_match_its_declarations_is_named(outcome, message):
    class Mismatched(ConfinedPuck):
        def _evaluate(self, action):
            return outcome

    env = Mismatched()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=message):
        env.step(np.zeros(2))
