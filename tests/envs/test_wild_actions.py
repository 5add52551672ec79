"""10,000 steps of uniformly random actions on every environment and backend never raise out of ``step``;
every episode ends in success, the time limit, one of the task's own failures or "diverged"."""

from __future__ import annotations

import gymnasium as gym
import pytest

import mechgym
from mechgym.rollout import make_policy, run_episodes, summary


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["mechgym", "mujoco"])
@pytest.mark.parametrize("env_id", sorted(mechgym.ENVIRONMENTS))
def test_ten_thousand_random_steps_never_raise(env_id, backend):
    env = gym.make(env_id, backend=backend)
    episodes = list(run_episodes(env, make_policy("random", env, seed=0), first_seed=0, steps=10_000))
    result = summary(episodes)
    assert result["steps"] >= 10_000
    assert set(result["failures"]) <= {*env.unwrapped.task_failures, "diverged"}, result
    for episode in episodes:
        assert episode.truncated or episode.success or episode.failure is not None
        assert (episode.error is not None) is (episode.failure == "diverged")
