"""Tiny hyperparameter files for training tests: one PPO update of 64 steps x 2 envs, SAC from step 64."""

from __future__ import annotations

from pathlib import Path

import pytest

TINY = {
    "ppo": """
mechgym/CubeDrop-v0:
  n_envs: 2
  n_timesteps: 256
  policy: MlpPolicy
  normalize: true
  n_steps: 64
  batch_size: 64
  n_epochs: 1
  policy_kwargs: "dict(net_arch=dict(pi=[16], vf=[16]))"
""",
    "sac": """
mechgym/CubeDrop-v0:
  n_envs: 1
  n_timesteps: 256
  policy: MlpPolicy
  normalize: "dict(norm_obs=True, norm_reward=False)"
  learning_starts: 64
  buffer_size: 1000
  batch_size: 32
  policy_kwargs: "dict(net_arch=[16])"
""",
}


@pytest.fixture
def tiny_hyperparams(tmp_path) -> dict[str, Path]:
    files = {}
    for algo, text in TINY.items():
        files[algo] = tmp_path / f"tiny_{algo}.yml"
        files[algo].write_text(text)
    return files
