"""Training into run folders: what a run folder holds, loading it back, resuming, interrupting."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from mechgym.training import config
from mechgym.training.cli import main
from mechgym.training.runs import RunFolder, RunFolderError, TrainedPolicy, checkpoint_paths

pytest.importorskip("stable_baselines3")
ROOT = Path(__file__).resolve().parents[2]


def _train(out: Path, hyperparams: Path, *extra: str, algo: str = "ppo") -> int:
    return main(["--env", "mechgym/CubeDrop-v0", "--algo", algo, "--hyperparams", str(hyperparams), "--out",
                 str(out), "--checkpoint-every", "128", "--no-progress", *extra])


@pytest.mark.parametrize("backend", ["mechgym", "mujoco"])
def test_a_tiny_ppo_run_on_each_backend_leaves_a_run_folder_that_loads_and_resumes(tmp_path, tiny_hyperparams,
                                                                                  backend):
    out = tmp_path / "run"
    assert _train(out, tiny_hyperparams["ppo"], "--backend", backend, "--physics-dt", "0.004",
                  "--decimation", "5") == 0
    run = RunFolder.open(out)
    record = run.record
    assert record["env_kwargs"] == {"backend": backend, "physics_dt": 0.004, "decimation": 5, "time_limit": 3.0}
    assert record["finished"] and record["timesteps_done"] >= 256 and record["algo"] == "ppo"
    assert record["hyperparams"]["n_steps"] == 64 and record["seed"] == 0
    assert {"mechgym", "stable-baselines3", "torch", "mujoco"} <= set(record["versions"])
    assert (out / "model.zip").is_file() and (out / "vecnormalize.pkl").is_file()
    model, stats, _ = checkpoint_paths(record["checkpoint"])
    assert (out / model).is_file() and (out / stats).is_file()
    policy = TrainedPolicy(run)
    action = policy(np.zeros(13, dtype=np.float32))
    assert action.shape == (3,) and np.all(np.abs(action) <= 1)

    assert main(["--env", "mechgym/CubeDrop-v0", "--out", str(out), "--resume", "--timesteps", "512",
                 "--no-progress", "--checkpoint-every", "128"]) == 0
    resumed = RunFolder.open(out).record
    assert resumed["finished"] and resumed["timesteps_done"] >= 512
    assert resumed["env_kwargs"] == record["env_kwargs"]


def test_sac_resumes_with_its_replay_buffer(tmp_path, tiny_hyperparams):
    out = tmp_path / "sac"
    assert _train(out, tiny_hyperparams["sac"], "--backend", "mujoco", algo="sac") == 0
    record = RunFolder.open(out).record
    buffers = sorted((out / "checkpoints").glob("*_replay_buffer.pkl"))
    assert [b.name for b in buffers] == [Path(checkpoint_paths(record["checkpoint"])[2]).name]  # the latest only
    assert main(["--env", "mechgym/CubeDrop-v0", "--algo", "sac", "--out", str(out), "--resume", "--timesteps",
                 "320", "--no-progress"]) == 0
    assert RunFolder.open(out).record["timesteps_done"] >= 320


def test_a_second_run_into_the_same_folder_and_conflicting_resume_flags_are_refused(tmp_path, tiny_hyperparams,
                                                                                   capsys):
    out = tmp_path / "run"
    assert _train(out, tiny_hyperparams["ppo"], "--backend", "mujoco") == 0
    assert _train(out, tiny_hyperparams["ppo"], "--backend", "mujoco") == 2
    assert "--resume" in capsys.readouterr().err
    assert main(["--env", "mechgym/CubeDrop-v0", "--out", str(out), "--resume", "--backend", "mechgym"]) == 2
    assert "--backend" in capsys.readouterr().err


def _wait_for_checkpoint(out: Path, process: subprocess.Popen, at_least: int) -> None:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if (json.loads((out / "run.json").read_text()).get("checkpoint") or 0) >= at_least:
                return
        except (OSError, json.JSONDecodeError):
            pass
        time.sleep(0.2)
    raise AssertionError(f"no checkpoint at {at_least} timesteps (process exit code {process.poll()})")


@pytest.mark.slow
@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill"])
def test_an_interrupted_run_keeps_a_whole_checkpoint_and_resumes_to_its_target(tmp_path, tiny_hyperparams, how):
    out = tmp_path / "run"
    command = [sys.executable, str(ROOT / "training" / "train.py"), "--env", "mechgym/CubeDrop-v0", "--backend",
               "mujoco", "--hyperparams", str(tiny_hyperparams["ppo"]), "--timesteps", "100000", "--out", str(out),
               "--checkpoint-every", "128", "--no-progress"]
    # (SIGINT back to its default in the child: a test run started as a background job of a non-interactive shell
    # inherits it ignored, and the run would not see the Ctrl-C it simulates.)
    process = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    _wait_for_checkpoint(out, process, 256)
    process.send_signal(how)
    _, err = process.communicate(timeout=120)
    if how == signal.SIGINT:
        assert process.returncode == 130 and "--resume" in err, (process.returncode, err[-3000:])
    run = RunFolder.open(out)
    assert not run.record["finished"]
    TrainedPolicy(run)  # the checkpoint run.json names is whole
    done = run.record["timesteps_done"]
    assert main(["--env", "mechgym/CubeDrop-v0", "--out", str(out), "--resume", "--timesteps", str(done + 128),
                 "--no-progress"]) == 0
    assert RunFolder.open(out).record["timesteps_done"] >= done + 128


def test_a_run_from_a_trained_agent_starts_from_its_network_and_statistics_on_another_backend(
        tmp_path, tiny_hyperparams, capsys):
    import torch

    from mechgym.training.train import TrainSettings, _build, _new_run

    source = tmp_path / "on-mujoco"
    assert _train(source, tiny_hyperparams["ppo"], "--backend", "mujoco") == 0
    settings = TrainSettings(env_id="mechgym/CubeDrop-v0", out=tmp_path / "built", env_settings={
        "backend": "mechgym"}, hyperparams_file=tiny_hyperparams["ppo"], trained_agent=str(source))
    model = _build(_new_run(settings), settings)
    trained = TrainedPolicy(RunFolder.open(source))
    for name, weights in trained.model.policy.state_dict().items():
        assert torch.equal(model.policy.state_dict()[name], weights), name
    normalizer = model.get_vec_normalize_env()
    assert normalizer.training and np.array_equal(normalizer.obs_rms.mean, trained.stats.obs_rms.mean)
    assert model.num_timesteps == 0
    model.get_env().close()

    out = tmp_path / "on-mechgym"
    assert _train(out, tiny_hyperparams["ppo"], "--backend", "mechgym", "--trained-agent", str(source)) == 0
    record = RunFolder.open(out).record
    assert record["finished"] and 256 <= record["timesteps_done"] < 512  # counted from zero, not from the source's
    assert record["env_kwargs"]["backend"] == "mechgym"
    assert record["trained_agent"]["env_kwargs"]["backend"] == "mujoco"
    assert record["trained_agent"]["fingerprint"] == RunFolder.open(source).fingerprint()

    assert _train(tmp_path / "sac", tiny_hyperparams["sac"], "--trained-agent", str(source), algo="sac") == 2
    assert "algorithm 'ppo', not 'sac'" in capsys.readouterr().err
    assert main(["--env", "mechgym/CubeDrop-v0", "--out", str(out), "--resume", "--trained-agent", str(source)]) == 2
    assert "--trained-agent" in capsys.readouterr().err


def test_a_corrupt_or_incomplete_run_folder_is_refused_naming_the_file(tmp_path, tiny_hyperparams):
    with pytest.raises(RunFolderError, match="run.json is missing"):
        RunFolder.open(tmp_path)
    out = tmp_path / "run"
    assert _train(out, tiny_hyperparams["ppo"], "--backend", "mujoco") == 0
    (out / "vecnormalize.pkl").write_bytes(b"not a pickle")
    with pytest.raises(RunFolderError, match="vecnormalize.pkl is corrupt"):
        TrainedPolicy(RunFolder.open(out))
    (out / "model.zip").write_bytes(b"PK broken")
    with pytest.raises(RunFolderError, match="model.zip is corrupt"):
        TrainedPolicy(RunFolder.open(out))
    (out / "model.zip").unlink()
    with pytest.raises(RunFolderError, match="model.zip is missing"):
        RunFolder.open(out).policy_files()
    (out / "run.json").write_text("{ truncated")
    with pytest.raises(RunFolderError, match="run.json is corrupt"):
        RunFolder.open(out)


def test_unsupported_rl_zoo3_keys_and_missing_entries_are_named(tmp_path):
    path = tmp_path / "h.yml"
    path.write_text("mechgym/CubeDrop-v0:\n  n_timesteps: 10\n  policy: MlpPolicy\n  frame_stack: 4\n")
    with pytest.raises(ValueError, match="frame_stack"):
        config.read("ppo", "mechgym/CubeDrop-v0", path)
    with pytest.raises(ValueError, match="no entry for 'mechgym/Gripper-v0'"):
        config.read("ppo", "mechgym/Gripper-v0", path)


@pytest.mark.parametrize("algo", config.ALGORITHMS)
def test_every_shipped_hyperparameter_entry_builds_its_env_and_policy(algo):
    import gymnasium

    import mechgym  # noqa: F401

    entries = __import__("yaml").safe_load(config.shipped_file(algo).read_text())
    for env_id in entries:
        entry = config.read(algo, env_id)
        env = gymnasium.make(env_id, **entry.env_kwargs)
        assert isinstance(entry.policy_kwargs(), dict)
        env.close()


@pytest.mark.slow
def test_rl_zoo3_trains_with_the_shipped_hyperparameters_and_saves_a_model(tmp_path):
    pytest.importorskip("rl_zoo3")
    command = [sys.executable, "-m", "rl_zoo3.train", "--algo", "ppo", "--env", "mechgym/CubeDrop-v0",
               "--gym-packages", "mechgym", "--conf-file", str(ROOT / "training" / "hyperparams" / "ppo.yml"),
               "-n", "256", "--log-folder", str(tmp_path / "logs"), "--eval-freq", "-1", "--seed", "0"]
    environment = {**os.environ, "MUJOCO_GL": "egl"}
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=environment, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    assert list((tmp_path / "logs").rglob("*.zip")), "rl-zoo3 saved no model"


def test_tensorboard_logging_needs_tensorboard_and_says_so(tmp_path, tiny_hyperparams, capsys):
    try:
        import tensorboard  # noqa: F401
    except ImportError:
        assert _train(tmp_path / "run", tiny_hyperparams["ppo"], "--backend", "mujoco", "--tensorboard") == 2
        assert "pip install tensorboard" in capsys.readouterr().err
        return
    assert _train(tmp_path / "run", tiny_hyperparams["ppo"], "--backend", "mujoco", "--tensorboard") == 0
    assert list((tmp_path / "run" / "tensorboard").rglob("events.out.tfevents.*"))
