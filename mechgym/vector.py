"""MechVectorEnv: N episodes of one mechgym task in one Gymnasium vector env, their physics run in parallel.

``gymnasium.make_vec("mechgym/<Name>-v0", num_envs=N)`` (or ``vectorization_mode="vector_entry_point"``)
builds it; the other keywords are the task's (``backend``, ``physics_dt``, ``decimation``, ...) plus
``autoreset_mode`` and ``threads``. Each of the N sub-environments is the task's own ``MechEnv`` with its own
simulator; a vector step checks and applies every action first (a bad action raises before any physics
runs), then shares the episodes out among ``threads`` threads, a contiguous share each, and each thread takes
its episodes a few at a time (``_step_share``): their control periods of physics in one ``Simulator.step_many``
call (on the in-house engine one compiled call, which releases the GIL, so that the threads' physics runs on
all the cores at once; MuJoCo's backend steps in Python between ``mj_step`` calls and gains nothing from
threads), then the evaluation of their steps (``MechEnv.conclude_many``: a compiled task's kernel, one call for
the group), which overlaps the other threads' physics, into the rows of one ``mechgym.steps.Steps`` (observations,
rewards, ends, reward terms, outcomes and errors in arrays), from which the vector info is built key by key, without
a dict per episode. Results are exactly those of Gymnasium's ``SyncVectorEnv`` over the same single envs: the
same observations, rewards, ends and infos, bit for bit, for every autoreset mode (``NEXT_STEP``, the default;
``SAME_STEP``, with ``info["final_obs"]`` and ``info["final_info"]``; ``DISABLED``, with
``options={"reset_mask": mask}``).

``reset(seed=s)`` seeds episode i with s + i. An episode whose simulator fails ends alone
(``info["failure"] == "diverged"``, truncated); the others go on.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from gymnasium import error
from gymnasium.envs.registration import load_env_creator
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from .env import MechEnv, _positive_integer
from .steps import Steps

# Episodes a thread advances per physics call (``Simulator.step_many``) before it evaluates them: enough that the
# call's fixed cost and the threads' handing the GIL to each other between physics (without) and evaluation (with)
# are spread over several episodes, few enough that one thread's evaluation overlaps the others' physics. Measured
# with 2 threads at N = 64 (env steps per second): 1 a call (each episode's physics, then its evaluation): CubeDrop
# 13,000, Gripper 4,800, SliderCrank 4,900; 4: 15,000-16,600, 4,300-4,900, 5,600-5,700; 8: 17,000-19,500,
# 4,100-4,650, 5,400-5,600 (a grasping Gripper episode's physics takes several times a free one's: the longer a
# thread's evaluation, the longer the other may wait for the GIL when its physics ends first).
EPISODES_PER_CALL = 4
CALLS_PER_SHARE = 4  # at least, where a thread's share allows: a thread's physics is not all at once


def _available_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


class MechVectorEnv(VectorEnv):
    """``num_envs`` episodes of the task ``env_class`` (a MechEnv subclass, or its "module:Class" entry point).

    autoreset_mode: an ``AutoresetMode`` (or its value, e.g. ``"SameStep"``).
    threads:        threads that run the physics; 1 runs it in the calling thread. Default: on the in-house
                    engine the cores this process may use, on MuJoCo 1 (its backend's Python between
                    ``mj_step`` calls holds the GIL: more threads only contend for it, 25-35 % slower here).
    env_kwargs:     the task's keywords, the same for every episode.
    """

    metadata: dict[str, Any] = {"render_modes": ["rgb_array"]}

    def __init__(self, env_class: type[MechEnv] | str, num_envs: int, *,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP, threads: int | None = None,
                 **env_kwargs):
        num_envs = _positive_integer("num_envs", num_envs)
        if threads is not None:
            threads = _positive_integer("threads", threads)
        try:
            self.autoreset_mode = AutoresetMode(autoreset_mode)
        except ValueError:
            raise ValueError(f"autoreset_mode must be one of {[m.value for m in AutoresetMode]}, "
                             f"got {autoreset_mode!r}") from None
        if isinstance(env_class, str):
            env_class = load_env_creator(env_class)
        if not (isinstance(env_class, type) and issubclass(env_class, MechEnv)):
            raise TypeError(f"env_class must be a MechEnv subclass, got {env_class!r}")
        env_kwargs.pop("max_episode_steps", None)  # make_vec passes the spec's (None: time limits are the env's)
        self.envs: list[MechEnv] = [env_class(**env_kwargs) for _ in range(num_envs)]
        first = self.envs[0]
        self.num_envs = num_envs
        self.single_observation_space = first.observation_space
        self.single_action_space = first.action_space
        self.observation_space = batch_space(first.observation_space, self.num_envs)
        self.action_space = batch_space(first.action_space, self.num_envs)
        self.render_mode = first.render_mode
        self.metadata = {**self.metadata, "render_fps": first.metadata["render_fps"],
                         "autoreset_mode": self.autoreset_mode}
        if threads is None:
            threads = _available_cores() if first.backend == "mechgym" else 1
        self.threads = min(threads, num_envs)
        self._pool = ThreadPoolExecutor(self.threads) if self.threads > 1 else None
        self._observations = np.zeros(self.observation_space.shape, dtype=np.float32)
        self._ended = np.zeros(self.num_envs, dtype=bool)  # the episode ended at the last step (autoreset)

    # ----------------------------------------------------------------- Gymnasium API
    def reset(self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None):
        if seed is None:
            seeds = [None] * self.num_envs
        elif isinstance(seed, int | np.integer) and not isinstance(seed, bool):
            seeds = [int(seed) + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"a list of seeds must have num_envs = {self.num_envs} entries, got {len(seeds)}")
        options = dict(options or {})
        mask = options.pop("reset_mask", None)
        if mask is None:
            mask = np.ones(self.num_envs, dtype=bool)
        elif not (isinstance(mask, np.ndarray) and mask.dtype == np.bool_ and mask.shape == (self.num_envs,)
                  and mask.any()):
            raise ValueError(f"options['reset_mask'] must be a bool array of shape ({self.num_envs},) with at "
                             f"least one True, got {mask!r}")
        for i in np.flatnonzero(mask).tolist():
            self._observations[i] = self.envs[i].begin(seeds[i])
        self._ended[mask] = False
        return self._observations.copy(), Steps.empty(self.num_envs, self.envs[0]).infos(self.envs[0], mask)

    def step(self, actions):
        actions = np.asarray(actions, dtype=np.float64)
        if actions.shape != self.action_space.shape:
            raise ValueError(f"actions must have shape {self.action_space.shape} (num_envs, action size), "
                             f"got {actions.shape}")
        next_step = self.autoreset_mode == AutoresetMode.NEXT_STEP
        if self.autoreset_mode == AutoresetMode.DISABLED and self._ended.any():
            raise error.ResetNeeded(f"episodes {np.flatnonzero(self._ended).tolist()} ended; with autoreset "
                                    "disabled, reset them (options={'reset_mask': ...}) before the next step")
        stepping = np.flatnonzero(~self._ended) if next_step else np.arange(self.num_envs)
        result = self.step_each(actions[stepping], stepping)
        first = self.envs[0]
        if stepping.size < self.num_envs:  # NEXT_STEP: the others ended at the last step; this step resets them
            steps, result = result, Steps.empty(self.num_envs, first)
            result.put(stepping, steps)
            for i in np.flatnonzero(self._ended).tolist():
                result.observations[i] = self.envs[i].begin()
        self._ended = result.terminated | result.truncated
        finals = {}
        if self.autoreset_mode == AutoresetMode.SAME_STEP and self._ended.any():
            final_obs = np.full(self.num_envs, None, dtype=object)
            finals = {"final_info": result.infos(first, self._ended), "_final_info": self._ended.copy()}
            for i in np.flatnonzero(self._ended).tolist():
                final_obs[i] = result.observations[i].copy()
                result.begin(i, self.envs[i].begin())
            finals |= {"final_obs": final_obs, "_final_obs": self._ended.copy()}
        self._observations[:] = result.observations
        return (result.observations, result.rewards, result.terminated, result.truncated,
                result.infos(first, np.ones(self.num_envs, dtype=bool)) | finals)

    def step_each(self, actions: np.ndarray, episodes: Sequence[int]) -> Steps:
        """Step the listed episodes with their actions (one row each), no autoreset: their single envs' ``step``
        results, in order, as the rows of a ``Steps``. A non-finite action raises before any episode's controls
        change."""
        actions = np.asarray(actions, dtype=np.float64)
        if actions.shape != (len(episodes), *self.single_action_space.shape):
            raise ValueError(f"actions must have shape {(len(episodes), *self.single_action_space.shape)} (one row "
                             f"per episode listed), got {actions.shape}")
        if not np.isfinite(actions).all():
            row, column = np.argwhere(~np.isfinite(actions))[0]
            raise ValueError(f"actions[{episodes[row]}, {column}] is {actions[row, column]}; actions must be "
                             "finite numbers in [-1, 1]")
        envs = [self.envs[i] for i in episodes]
        clipped = np.minimum(np.maximum(actions, -1.0), 1.0)  # (what each env's act() would make of its row)
        for env, action in zip(envs, clipped, strict=True):
            env.act_clipped(action)
        steps = Steps.empty(len(envs), self.envs[0])
        if not envs:
            return steps
        work = list(zip(envs, clipped, strict=True))
        if self._pool is None or len(envs) < 2:
            _step_share(work, steps)
            return steps
        # One contiguous share per thread: a thread's evaluation of its last few episodes (Python, holding the GIL)
        # runs while the other threads' physics (compiled, without the GIL) goes on.
        bounds = np.linspace(0, len(envs), min(self.threads, len(envs)) + 1).round().astype(int).tolist()
        list(self._pool.map(_step_share, [work[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)],
                            [steps.rows(a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]))
        return steps

    def render(self) -> tuple[Any, ...] | None:
        return tuple(env.render() for env in self.envs) if self.render_mode is not None else None

    def close_extras(self, **kwargs) -> None:
        for env in self.envs:
            env.close()
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


def _step_share(work: list[tuple[MechEnv, np.ndarray]], out: Steps) -> None:
    """The steps of the (episode, clipped action) pairs whose actions are applied, into the rows of ``out``, a group
    at a time (up to ``EPISODES_PER_CALL``, in ``CALLS_PER_SHARE`` groups at least): their physics in one
    ``Simulator.step_many`` call, then their evaluation (``conclude_many``)."""
    group = max(1, min(EPISODES_PER_CALL, len(work) // CALLS_PER_SHARE))
    for first in range(0, len(work), group):
        part = work[first:first + group]
        envs = [env for env, _ in part]
        errors = type(envs[0].sim).step_many([env.sim for env in envs], envs[0].decimation)
        type(envs[0]).conclude_many(envs, [action for _, action in part], errors, out.rows(first, first + len(part)))
