"""Episodes with a policy (mechgym.rollout), the demo and record commands."""

from __future__ import annotations

import gymnasium as gym
import imageio.v2 as imageio
import numpy as np
import pytest

from mechgym import cli
from mechgym.record import record_episode, write_video
from mechgym.rollout import make_policy, run_episode, run_episodes, summary


def test_zero_and_random_policies_act_within_the_box_and_random_is_seeded():
    env = gym.make("mechgym/Gripper-v0", backend="mujoco")
    observation, _ = env.reset(seed=0)
    np.testing.assert_array_equal(make_policy("zero", env)(observation), [0.0, 0.0])
    draws = [make_policy("random", env, seed=3)(observation) for _ in range(2)]
    np.testing.assert_array_equal(*draws)
    assert env.action_space.contains(draws[0])
    with pytest.raises(ValueError, match="unknown policy"):
        make_policy("clever", env)


def test_run_episodes_by_count_or_by_steps_with_consecutive_seeds():
    env = gym.make("mechgym/CubeDrop-v0", backend="mujoco", time_limit=0.1)
    by_count = list(run_episodes(env, make_policy("zero", env), first_seed=5, episodes=3))
    assert [e.seed for e in by_count] == [5, 6, 7] and all(e.steps == 5 and e.truncated for e in by_count)
    by_steps = list(run_episodes(env, make_policy("zero", env), first_seed=0, steps=12))
    assert len(by_steps) == 3 and summary(by_steps)["steps"] == 15
    with pytest.raises(ValueError, match="either"):
        list(run_episodes(env, make_policy("zero", env)))


def test_an_episode_records_its_outcome():
    env = gym.make("mechgym/CubeDrop-v0", backend="mujoco")
    episode = run_episode(env, env.unwrapped.scripted_policy(), seed=0)
    assert episode.success and episode.failure is None and not episode.truncated
    assert episode.time == pytest.approx(episode.steps * 0.02)
    result = summary([episode, run_episode(env, make_policy("zero", env), seed=1)])
    assert result["successes"] == 1 and result["episodes"] == 2 and sum(result["failures"].values()) <= 1


def test_record_writes_a_gif_with_a_frame_per_period_of_simulated_time(tmp_path):
    env = gym.make("mechgym/Gripper-v0", backend="mujoco", render_mode="rgb_array", render_size=(64, 48),
                   time_limit=1.0)
    frames, episode = record_episode(env, env.unwrapped.scripted_policy(), seed=0, fps=20)  # a moving scene
    assert len(frames) == 1 + 20 and frames[0].shape == (48, 64, 3)
    path = tmp_path / "clip.gif"
    write_video(frames, path, fps=20)
    assert len(imageio.mimread(path)) == len(frames)
    with pytest.raises(ValueError, match=".gif"):
        write_video(frames, tmp_path / "clip.avi", fps=20)


def test_the_demo_command_prints_successes_and_failures(capsys):
    assert cli.main(["rollout", "CubeDrop-v0", "--backend", "mujoco", "--episodes", "3", "--verbose"]) == 0
    out = capsys.readouterr().out
    assert "3/3 successes" in out and "seed 2: success" in out


def test_the_record_command_writes_the_file(tmp_path, capsys):
    path = tmp_path / "lift.gif"
    assert cli.main(["record", "mechgym/SliderCrank-v0", "--backend", "mujoco", "--out", str(path), "--width", "64",
                     "--height", "48", "--time-limit", "0.05", "--slow-motion", "10"]) == 0
    assert path.is_file() and "16 frames" in capsys.readouterr().out


def test_commands_name_a_bad_environment_or_setting(capsys):
    with pytest.raises(SystemExit):
        cli.main(["rollout", "Hopper-v5"])
    assert "unknown environment" in capsys.readouterr().err
    assert cli.main(["rollout", "CubeDrop-v0", "--backend", "mujoco", "--decimation", "0"]) == 2
    assert "decimation must be a positive integer" in capsys.readouterr().err
