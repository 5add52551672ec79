"""stable-baselines3 from the native vector env: ``make_sb3_vec_env`` and the ``VecEnv`` it returns.

``NativeVecEnv`` is SB3's ``DummyVecEnv`` over the episodes of a :class:`mechgym.vector.MechVectorEnv`,
with one difference: a step runs the physics of all the episodes at once (``MechVectorEnv.step_each``, on
the vector env's threads) instead of one episode after the other. SB3's conventions are DummyVecEnv's own:
an episode that ends is reset in the same step, its last observation in ``info["terminal_observation"]`` and
``info["TimeLimit.truncated"]`` set when it was truncated rather than terminated; ``seed(s)`` seeds episode i
with s + i at the next ``reset()``.
"""

from __future__ import annotations

from typing import Any

import gymnasium
from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor

from .vector import MechVectorEnv


class NativeVecEnv(DummyVecEnv):
    """SB3 ``VecEnv`` over ``vector``'s episodes (module docstring)."""

    def __init__(self, vector: MechVectorEnv):
        self.vector = vector
        super().__init__([lambda env=env: env for env in vector.envs])

    def step_wait(self):
        steps = self.vector.step_each(self.actions, range(self.num_envs))
        for index, env in enumerate(self.vector.envs):
            obs, reward, terminated, truncated, info = steps.transition(index, env)
            self.buf_rews[index] = reward
            self.buf_dones[index] = terminated or truncated
            info["TimeLimit.truncated"] = truncated and not terminated
            if self.buf_dones[index]:
                info["terminal_observation"] = obs
                obs, self.reset_infos[index] = self.envs[index].reset()
            self.buf_infos[index] = info
            self._save_obs(index, obs)
        return self._obs_from_buf(), self.buf_rews.copy(), self.buf_dones.copy(), list(self.buf_infos)

    def close(self) -> None:
        self.vector.close()


def make_sb3_vec_env(env_id: str, n_envs: int, seed: int | None = None, env_kwargs: dict[str, Any] | None = None,
                     threads: int | None = None, info_keywords: tuple[str, ...] = ("is_success",)) -> VecMonitor:
    """``n_envs`` episodes of ``env_id`` (a mechgym id) as an SB3 VecEnv, monitored (SB3's ``VecMonitor``, with
    ``info_keywords`` in its episode records) and seeded for its first reset as SB3's ``make_vec_env`` does."""
    vector = gymnasium.make_vec(env_id, num_envs=n_envs, vectorization_mode="vector_entry_point", threads=threads,
                                **(env_kwargs or {})).unwrapped
    if not isinstance(vector, MechVectorEnv):
        raise ValueError(f"{env_id} has no native vector env (not a mechgym environment)")
    venv = NativeVecEnv(vector)
    if seed is not None:
        for index, env in enumerate(vector.envs):
            env.action_space.seed(seed + index)
    venv.seed(seed)
    return VecMonitor(venv, info_keywords=info_keywords)
