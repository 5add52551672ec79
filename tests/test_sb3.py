"""stable-baselines3 from the native vector env (mechgym.sb3): SB3's DummyVecEnv transitions exactly, and
PPO trains through it."""

from __future__ import annotations

import numpy as np
import pytest
from stable_baselines3 import PPO
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor

from mechgym.sb3 import NativeVecEnv, make_sb3_vec_env

from .test_vector import assert_same

KWARGS = {"backend": "mechgym", "time_limit": 0.3}


def split_episodes(infos: list[dict]) -> tuple[list[dict], list[tuple]]:
    """The infos without their episode records, and the records' (return, length): SB3's Monitor rounds the
    return to 6 digits, its VecMonitor keeps a float32 sum, and each has its own wall-clock times."""
    records = [(info["episode"]["r"], info["episode"]["l"]) for info in infos if "episode" in info]
    return [{k: v for k, v in info.items() if k != "episode"} for info in infos], records


@pytest.mark.parametrize("env_id", ["mechgym/CubeDrop-v0", "mechgym/Gripper-v0"])
def test_native_vec_env_steps_exactly_as_dummy_vec_env_with_monitors(env_id):
    ours = make_sb3_vec_env(env_id, 3, seed=5, env_kwargs=KWARGS)
    theirs = make_vec_env(env_id, n_envs=3, seed=5, env_kwargs=KWARGS, vec_env_cls=DummyVecEnv,
                          monitor_kwargs={"info_keywords": ("is_success",)})
    assert isinstance(ours, VecMonitor) and isinstance(ours.venv, NativeVecEnv)
    assert np.array_equal(ours.reset(), theirs.reset())
    rng = np.random.default_rng(0)
    ended = 0
    for k in range(40):
        actions = rng.uniform(-1, 1, size=(3, *ours.action_space.shape)).astype(np.float32)
        (obs, rewards, dones, infos), (obs2, rewards2, dones2, infos2) = ours.step(actions), theirs.step(actions)
        assert_same((obs, rewards, dones), (obs2, rewards2, dones2), f"step {k}")
        (infos, episodes), (infos2, episodes2) = split_episodes(infos), split_episodes(infos2)
        assert_same(infos, infos2, f"step {k} infos")
        assert [n for _, n in episodes] == [n for _, n in episodes2]
        assert np.allclose([r for r, _ in episodes], [r for r, _ in episodes2], rtol=1e-5, atol=1e-6)
        for done, info in zip(dones, infos, strict=True):
            assert done == ("terminal_observation" in info)
        assert len(episodes) == int(dones.sum())
        ended += int(dones.sum())
    assert ended >= 3
    assert ours.get_attr("physics_dt") == [0.002] * 3
    ours.close()


def test_ppo_trains_through_the_native_vec_env():
    venv = make_sb3_vec_env("mechgym/CubeDrop-v0", 2, seed=0, env_kwargs=KWARGS)
    model = PPO("MlpPolicy", venv, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu",
                policy_kwargs={"net_arch": [8]})
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(128)
    assert model.num_timesteps == 128
    assert any(not np.array_equal(a.numpy(), b.detach().numpy()) for a, b in zip(before, model.policy.parameters(),
                                                                                 strict=True))
    assert len(model.ep_info_buffer) >= 2  # episodes of 15 steps ended and were recorded
    assert len(model.ep_success_buffer) == len(model.ep_info_buffer)
    venv.close()
