"""MechVectorEnv: N episodes of one mechgym task in one Gymnasium vector env, their physics run in parallel.

``gymnasium.make_vec("mechgym/<Name>-v0", num_envs=N)`` (or ``vectorization_mode="vector_entry_point"``)
builds it; the other keywords are the task's (``backend``, ``physics_dt``, ``decimation``, ...) plus
``autoreset_mode`` and ``threads``. Each of the N sub-environments is the task's own ``MechEnv`` with its own
simulator; a vector step checks and applies every action first (a bad action raises before any physics
runs), then runs the control period's physics of every episode in one ``Simulator.step_many`` call (on the in-house
engine compiled calls that release the GIL, ``SHARES_PER_THREAD`` contiguous shares of the episodes per thread run on
``threads`` threads at once; MuJoCo's backend steps in Python between ``mj_step`` calls and gains nothing from
threads), then the evaluation of every step in this thread (``MechEnv.conclude_many``: a compiled task's readings in
one compiled call and its kernel in one more) into one ``mechgym.steps.Steps`` (observations, rewards, ends, reward
terms, outcomes and errors in arrays), from which the vector info is built key by key, without a dict per episode.
Results are exactly those of Gymnasium's ``SyncVectorEnv`` over the same single envs: the
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

# Calls of the physics per thread in a vector step (``Simulator.step_many``'s shares): more than one, so that a thread
# whose share of the episodes ran faster (free falls beside grasps) takes another; few, each call costing its handing
# of the GIL to and from a thread.
SHARES_PER_THREAD = 2


def _available_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


class MechVectorEnv(VectorEnv):
    """``num_envs`` episodes of the task ``env_class`` (a MechEnv subclass, or its "module:Class" entry point).

    autoreset_mode: an ``AutoresetMode`` (or its value, e.g. ``"SameStep"``).
    threads:        threads that run the physics; 1 runs it in the calling thread. Default: on the in-house
                    engine the cores this process may use, on MuJoCo 1 (its backend steps in Python, in the
                    calling thread).
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
        # The physics on the threads (compiled calls that release the GIL), the evaluation here, all at once.
        first = envs[0]
        errors = type(first.sim).step_many([env.sim for env in envs], first.decimation, self._pool,
                                           self.threads * SHARES_PER_THREAD)
        type(first).conclude_many(envs, list(clipped), errors, steps)
        return steps

    def render(self) -> tuple[Any, ...] | None:
        return tuple(env.render() for env in self.envs) if self.render_mode is not None else None

    def close_extras(self, **kwargs) -> None:
        for env in self.envs:
            env.close()
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
