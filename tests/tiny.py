"""Tiny hyperparameter files and runs for training and evaluation tests: one PPO update of 64 steps x 2
envs, SAC from step 64."""

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


def write_tiny(folder: Path) -> dict[str, Path]:
    files = {}
    for algo, text in TINY.items():
        files[algo] = folder / f"tiny_{algo}.yml"
        files[algo].write_text(text)
    return files


def tiny_run(out: Path, backend: str, seed: int = 0) -> Path:
    """A finished 256-step PPO run on CubeDrop at physics_dt 4 ms, decimation 5 (control period 20 ms)."""
    from mechgym.training.cli import main

    out.mkdir(parents=True, exist_ok=True)
    hyperparams = write_tiny(out.parent)["ppo"]
    assert main(["--env", "mechgym/CubeDrop-v0", "--hyperparams", str(hyperparams), "--backend", backend,
                 "--physics-dt", "0.004", "--decimation", "5", "--seed", str(seed), "--out", str(out),
                 "--no-progress"]) == 0
    return out


@pytest.fixture
def tiny_hyperparams(tmp_path) -> dict[str, Path]:
    return write_tiny(tmp_path)
