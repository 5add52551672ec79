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
the group), which overlaps the other threads' physics. Results are
exactly those of Gymnasium's ``SyncVectorEnv`` over the same single envs: the same observations, rewards, ends
and infos, bit for bit, for every autoreset mode (``NEXT_STEP``, the default; ``SAME_STEP``, with
``info["final_obs"]`` and ``info["final_info"]``; ``DISABLED``, with ``options={"reset_mask": mask}``).

``reset(seed=s)`` seeds episode i with s + i. An episode whose simulator fails ends alone
(``info["failure"] == "diverged"``, truncated); the others go on.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import chain
from typing import Any

import numpy as np
from gymnasium import error
from gymnasium.envs.registration import load_env_creator
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from .env import MechEnv, Transition, _positive_integer

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
        infos: list[tuple[int, dict[str, Any]]] = []
        for i in np.flatnonzero(mask):
            self._observations[i], info = self.envs[i].reset(seed=seeds[i], options=options or None)
            infos.append((i, info))
        self._ended[mask] = False
        return self._observations.copy(), self._batched(infos)

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
        transitions = dict(zip(stepping.tolist(), self.step_each(actions[stepping], stepping), strict=True))
        rewards = np.zeros(self.num_envs)
        terminations = np.zeros(self.num_envs, dtype=bool)
        truncations = np.zeros(self.num_envs, dtype=bool)
        infos: list[tuple[int, dict[str, Any]]] = []
        for i, env in enumerate(self.envs):
            if i not in transitions:  # NEXT_STEP: the episode ended at the last step; this step resets it
                self._observations[i], info = env.reset()
            else:
                self._observations[i], rewards[i], terminations[i], truncations[i], info = transitions[i]
                if self.autoreset_mode == AutoresetMode.SAME_STEP and (terminations[i] or truncations[i]):
                    infos.append((i, {"final_obs": self._observations[i].copy(), "final_info": info}))
                    self._observations[i], info = env.reset()
            infos.append((i, info))
        self._ended = terminations | truncations
        return self._observations.copy(), rewards, terminations, truncations, self._batched(infos)

    def step_each(self, actions: np.ndarray, episodes: Sequence[int]) -> list[Transition]:
        """Step the listed episodes with their actions (one row each), no autoreset: their single envs'
        ``step`` results, in order. A non-finite action raises before any episode's controls change."""
        actions = np.asarray(actions, dtype=np.float64)
        if actions.shape != (len(episodes), *self.single_action_space.shape):
            raise ValueError(f"actions must have shape {(len(episodes), *self.single_action_space.shape)} (one row "
                             f"per episode listed), got {actions.shape}")
        bad = np.argwhere(~np.isfinite(actions))
        if bad.size:
            row, column = bad[0]
            raise ValueError(f"actions[{episodes[row]}, {column}] is {actions[row, column]}; actions must be "
                             "finite numbers in [-1, 1]")
        envs = [self.envs[i] for i in episodes]
        clipped = np.clip(actions, -1.0, 1.0)  # (what each env's act() would make of its row)
        for env, action in zip(envs, clipped, strict=True):
            env.act_clipped(action)
        work = list(zip(envs, clipped, strict=True))
        if self._pool is None or len(envs) < 2:
            return _step_share(work)
        # One contiguous share per thread: a thread's evaluation of its last few episodes (Python, holding the GIL)
        # runs while the other threads' physics (compiled, without the GIL) goes on.
        bounds = np.linspace(0, len(envs), min(self.threads, len(envs)) + 1).round().astype(int)
        shares = [work[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
        return [transition for share in self._pool.map(_step_share, shares) for transition in share]

    def _batched(self, infos: list[tuple[int, dict[str, Any]]]) -> dict[str, Any]:
        """The vector info of the episodes' infos, (episode, info) in order: what Gymnasium's ``_add_info``
        makes of them one by one (per key an array over the episodes, of the type of the key's first value, and
        its mask ``_key``; a dict value batched likewise; ``final_obs`` an object array), built key by key."""
        batched: dict[str, Any] = {}
        for key in dict.fromkeys(chain.from_iterable(info for _, info in infos)):  # (in order of first appearance)
            episodes = [i for i, info in infos if key in info]
            values = [info[key] for _, info in infos if key in info]
            first = values[0]
            if key != "final_obs" and isinstance(first, dict):
                batched[key] = self._batched(list(zip(episodes, values, strict=True)))
            else:
                if key == "final_obs" or not (type(first) in (int, float, bool) or isinstance(first, np.number
                                                                                          | np.ndarray)):
                    array = np.full(self.num_envs, None, dtype=object)
                elif isinstance(first, np.ndarray):
                    array = np.zeros((self.num_envs, *first.shape), dtype=first.dtype)
                else:
                    array = np.zeros(self.num_envs, dtype=type(first))
                if array.dtype == object:  # (element by element: an array value must stay one element)
                    for i, value in zip(episodes, values, strict=True):
                        array[i] = value
                else:
                    array[episodes] = values
                batched[key] = array
            mask = np.zeros(self.num_envs, dtype=np.bool_)
            mask[episodes] = True
            batched[f"_{key}"] = mask
        return batched

    def render(self) -> tuple[Any, ...] | None:
        return tuple(env.render() for env in self.envs) if self.render_mode is not None else None

    def close_extras(self, **kwargs) -> None:
        for env in self.envs:
            env.close()
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


def _step_share(work: list[tuple[MechEnv, np.ndarray]]) -> list[Transition]:
    """The transitions of the (episode, clipped action) pairs whose actions are applied, a group at a time (up to
    ``EPISODES_PER_CALL``, in ``CALLS_PER_SHARE`` groups at least): their physics in one ``Simulator.step_many``
    call, then their evaluation (``conclude_many``)."""
    transitions: list[Transition] = []
    group = max(1, min(EPISODES_PER_CALL, len(work) // CALLS_PER_SHARE))
    for first in range(0, len(work), group):
        part = work[first:first + group]
        envs = [env for env, _ in part]
        errors = type(envs[0].sim).step_many([env.sim for env in envs], envs[0].decimation)
        transitions += type(envs[0]).conclude_many(envs, [action for _, action in part], errors)
    return transitions
