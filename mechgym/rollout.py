"""Running episodes of an environment with a policy, and what each episode came to.

A policy is a callable from an observation to an action. Besides a task's hand-written controller
(``env.unwrapped.scripted_policy()``) two stand-ins are built here: ``"zero"`` (zero actions: the passive
scene, motors off or servos holding their start) and ``"random"`` (actions uniform over the action space,
seeded).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import gymnasium as gym
import numpy as np

from .env import ScriptedPolicy

POLICIES = ("scripted", "zero", "random")


@dataclass(frozen=True)
class Episode:
    """One episode: its reset seed, control steps, simulated seconds, return, outcome and wall time (s)."""

    seed: int
    steps: int
    time: float
    total_reward: float
    success: bool
    failure: str | None
    truncated: bool
    wall_time: float
    error: str | None = None  # the SimulationError's message when the failure is "diverged"

    @property
    def outcome(self) -> str:
        """``"success"``, the failure's name, or ``"time limit"``."""
        return "success" if self.success else (self.failure or "time limit")


class _Zero(ScriptedPolicy):
    def __init__(self, space: gym.spaces.Box):
        self.action = np.zeros(space.shape, dtype=space.dtype)

    def __call__(self, observation):
        return self.action


class _Random(ScriptedPolicy):
    def __init__(self, space: gym.spaces.Box, seed: int):
        self.space = space
        self.space.seed(seed)

    def __call__(self, observation):
        return self.space.sample()


def make_policy(name: str, env: gym.Env, seed: int = 0) -> Callable[[np.ndarray], np.ndarray]:
    """``"scripted"`` (the task's hand-written controller), ``"zero"`` or ``"random"``."""
    if name == "scripted":
        return env.unwrapped.scripted_policy()
    if name == "zero":
        return _Zero(env.action_space)
    if name == "random":
        return _Random(env.action_space, seed)
    raise ValueError(f"unknown policy {name!r}; policies are {list(POLICIES)}")


def run_episode(env: gym.Env, policy: Callable[[np.ndarray], np.ndarray], seed: int,
                on_state: Callable[[dict, bool], None] | None = None) -> Episode:
    """Reset ``env`` with ``seed`` and run ``policy`` until the episode terminates or is truncated.

    on_state(info, done), when given, sees every state: the reset's (done False), then each step's.
    """
    start = time.perf_counter()
    if isinstance(policy, ScriptedPolicy):
        policy.reset()
    observation, info = env.reset(seed=seed)
    if on_state is not None:
        on_state(info, False)
    steps, total = 0, 0.0
    while True:
        observation, reward, terminated, truncated, info = env.step(policy(observation))
        steps += 1
        total += float(reward)
        if on_state is not None:
            on_state(info, terminated or truncated)
        if terminated or truncated:
            break
    return Episode(seed, steps, float(info["time"]), total, bool(info["is_success"]), info["failure"],
                   bool(truncated), time.perf_counter() - start, info.get("error"))


def run_episodes(env: gym.Env, policy: Callable[[np.ndarray], np.ndarray], first_seed: int = 0,
                 episodes: int | None = None, steps: int | None = None) -> Iterator[Episode]:
    """Episodes with seeds first_seed, first_seed + 1, ...: ``episodes`` of them, or as many as it takes to
    reach ``steps`` control steps in all (the last one is run to its end)."""
    if (episodes is None) == (steps is None):
        raise ValueError("give either a number of episodes or a number of steps")
    seed, done = first_seed, 0
    while (episodes is not None and seed - first_seed < episodes) or (steps is not None and done < steps):
        episode = run_episode(env, policy, seed)
        done += episode.steps
        seed += 1
        yield episode


def summary(episodes: list[Episode]) -> dict:
    """Counts and means over episodes: successes, failures by name, mean return and length (s)."""
    failures = Counter(e.failure for e in episodes if e.failure is not None)
    return {
        "episodes": len(episodes),
        "steps": sum(e.steps for e in episodes),
        "successes": sum(e.success for e in episodes),
        "failures": dict(sorted(failures.items())),
        "mean_return": float(np.mean([e.total_reward for e in episodes])) if episodes else float("nan"),
        "mean_length": float(np.mean([e.time for e in episodes])) if episodes else float("nan"),
        "wall_time": sum(e.wall_time for e in episodes),
    }
