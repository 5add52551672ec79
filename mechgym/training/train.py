"""Training one policy with stable-baselines3 into a run folder, checkpointed and resumable."""

from __future__ import annotations

import platform
import sys
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from ..files import interrupts_deferred
from . import config
from .runs import (
    MODEL_FILE,
    STATS_FILE,
    RunFolder,
    RunFolderError,
    checkpoint_paths,
    require_training_extra,
    save_model,
    save_pickle,
)

# SB3 vector envs: "native" (mechgym.sb3: the episodes' physics at once on the in-process threads), "sync"
# (SB3's DummyVecEnv: one episode after the other) or "subproc" (SubprocVecEnv: one process per episode)
VEC_CHOICES = ("native", "sync", "subproc")
VERSIONED = ("mechgym", "stable-baselines3", "torch", "gymnasium", "mujoco", "numba", "numpy")


def algorithm_class(algo: str):
    from stable_baselines3 import PPO, SAC

    classes = {"ppo": PPO, "sac": SAC}
    if algo not in classes:
        raise ValueError(f"unknown algorithm {algo!r}; algorithms are {sorted(classes)}")
    return classes[algo]


def versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for package in VERSIONED:
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = "not installed"
    return found


@dataclass
class TrainSettings:
    """What a run is made of; ``None`` fields come from the hyperparameter entry or the env's defaults."""

    env_id: str
    algo: str = "ppo"
    out: Path = Path("runs/run")
    timesteps: int | None = None
    seed: int = 0
    n_envs: int | None = None
    env_settings: dict[str, Any] = field(default_factory=dict)  # backend, physics_dt, decimation, time_limit
    hyperparams_file: Path | None = None
    checkpoint_every: int = 20_000  # timesteps between checkpoints
    vec: str = "native"  # one of VEC_CHOICES
    tensorboard: bool = False
    progress: bool = True
    trained_agent: str | None = None  # a run folder or shipped policy whose model and statistics start the run


def _env_kwargs(env_id: str, entry: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """The env's kwargs with every setting of ENV_SETTINGS filled in (from the env when not given)."""
    import gymnasium

    kwargs = {**entry, **{k: v for k, v in overrides.items() if v is not None}}
    env = gymnasium.make(env_id, **kwargs).unwrapped
    filled = {**kwargs, "backend": env.backend, "physics_dt": env.physics_dt, "decimation": env.decimation,
              "time_limit": env.time_limit}
    env.close()
    return filled


def _vec_env(env_id: str, n_envs: int, seed: int, env_kwargs: dict[str, Any], vec: str):
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    if vec == "native":
        from ..sb3 import make_sb3_vec_env

        return make_sb3_vec_env(env_id, n_envs, seed, env_kwargs)
    classes = {"sync": DummyVecEnv, "subproc": SubprocVecEnv}
    if vec not in classes:
        raise ValueError(f"unknown vector env {vec!r}; choose one of {sorted(VEC_CHOICES)}")
    return make_vec_env(env_id, n_envs=n_envs, seed=seed, env_kwargs=env_kwargs, vec_env_cls=classes[vec],
                        monitor_kwargs={"info_keywords": ("is_success",)})


def _starting_agent(settings: TrainSettings, normalized: bool) -> dict[str, Any] | None:
    """What run.json says of the trained agent a run starts from (rl-zoo3's ``--trained-agent``), checked.

    Its policy must fit the new run: the same env id (spaces), algorithm and observation normalisation.
    """
    if settings.trained_agent is None:
        return None
    source = RunFolder.open(settings.trained_agent)
    mismatches = [f"{what} {theirs!r}, not {ours!r}" for what, theirs, ours in (
        ("env", source.env_id, settings.env_id), ("algorithm", source.record["algo"], settings.algo),
        ("normalize", source.record.get("normalize") is not None, normalized)) if theirs != ours]
    if mismatches:
        raise ValueError(f"the trained agent {settings.trained_agent} cannot start this run: it has "
                         + "; ".join(mismatches))
    return {"run": str(settings.trained_agent), "path": str(source.path.resolve()),
            "fingerprint": source.fingerprint(), "env_kwargs": source.env_kwargs,
            "timesteps_done": source.record["timesteps_done"]}


def _new_run(settings: TrainSettings) -> RunFolder:
    entry = config.read(settings.algo, settings.env_id, settings.hyperparams_file)
    if (settings.out / "run.json").exists():
        raise ValueError(f"{settings.out} already holds a run; use --resume to continue it, or another --out")
    record = {
        "env_id": settings.env_id,
        "env_kwargs": _env_kwargs(settings.env_id, entry.env_kwargs, settings.env_settings),
        "algo": settings.algo,
        "policy": entry.policy,
        "hyperparams": entry.algo_kwargs,
        "hyperparams_entry": entry.source,
        "normalize": None if entry.normalize is None else {"gamma": entry.algo_kwargs.get("gamma", 0.99),
                                                           **entry.normalize},
        "n_envs": settings.n_envs or entry.n_envs,
        "seed": settings.seed,
        "timesteps_target": settings.timesteps or entry.n_timesteps,
        "timesteps_done": 0,
        "trained_agent": _starting_agent(settings, entry.normalize is not None),
        "checkpoint": None,
        "finished": False,
        "wall_time_s": 0.0,
        "versions": versions(),
        "command": " ".join(sys.argv),
    }
    settings.out.mkdir(parents=True, exist_ok=True)
    return RunFolder(settings.out, {}).write_record(**record)


class _Checkpoints:
    """SB3 callback pieces: a checkpoint every ``every`` timesteps and a progress bar with returns and success."""

    def __init__(self, run: RunFolder, every: int, progress: bool, started: float):
        from stable_baselines3.common.callbacks import BaseCallback

        outer = self

        class Callback(BaseCallback):
            def _on_training_start(self) -> None:
                outer.start(self.model)

            def _on_step(self) -> bool:
                outer.step(self.model)
                return True

            def _on_training_end(self) -> None:
                outer.close()

        self.callback = Callback()
        self.run, self.every, self.progress, self.started = run, every, progress, started
        self.bar = None
        self.last = run.record["timesteps_done"]

    def start(self, model) -> None:
        if self.progress:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=self.run.record["timesteps_target"], initial=model.num_timesteps,
                            unit="step", dynamic_ncols=True, desc=self.run.name)

    def step(self, model) -> None:
        if self.bar is not None:
            self.bar.update(model.num_timesteps - self.bar.n)
            stats = training_statistics(model)
            postfix = {}
            if "mean_return_last_100" in stats:
                postfix["return"] = f"{stats['mean_return_last_100']:.3g}"
            if "success_rate_last_100" in stats:
                postfix["success"] = f"{stats['success_rate_last_100']:.0%}"
            self.bar.set_postfix(postfix, refresh=False)
        if model.num_timesteps - self.last >= self.every:
            self.save(model)

    def save(self, model) -> None:
        """The checkpoint at the current step; run.json names it only once its files are whole. A Ctrl-C during
        the save takes effect after it (``files.interrupts_deferred``)."""
        with interrupts_deferred():
            self._save(model)

    def _save(self, model) -> None:
        step = model.num_timesteps
        model_path, stats_path, buffer_path = checkpoint_paths(step)
        save_model(model, self.run.path / model_path)
        normalizer = model.get_vec_normalize_env()
        if normalizer is not None:
            save_pickle(normalizer, self.run.path / stats_path)
        if hasattr(model, "replay_buffer"):
            save_pickle(model.replay_buffer, self.run.path / buffer_path)
        previous = self.run.record.get("checkpoint")
        self.run = self.run.write_record(checkpoint=step, timesteps_done=step,
                                         wall_time_s=self.run.record["wall_time_s"] + self.elapsed(),
                                         statistics=training_statistics(model))
        self.started = time.perf_counter()
        if previous is not None and previous != step:
            (self.run.path / checkpoint_paths(previous)[2]).unlink(missing_ok=True)  # keep one replay buffer
        self.last = step

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def training_statistics(model) -> dict[str, float]:
    """Mean return and success over SB3's last 100 finished episodes."""
    stats: dict[str, float] = {}
    if model.ep_info_buffer:
        stats["mean_return_last_100"] = float(np.mean([info["r"] for info in model.ep_info_buffer]))
        stats["mean_length_steps_last_100"] = float(np.mean([info["l"] for info in model.ep_info_buffer]))
    if model.ep_success_buffer:
        stats["success_rate_last_100"] = float(np.mean(model.ep_success_buffer))
    return stats


def _build(run: RunFolder, settings: TrainSettings):
    """The vector env (normalised when the run says so) and the model: new, or loaded from the checkpoint."""
    from stable_baselines3.common.vec_env import VecNormalize

    record = run.record
    venv = _vec_env(record["env_id"], record["n_envs"], record["seed"] + record["timesteps_done"],
                    record["env_kwargs"], settings.vec)
    algo = algorithm_class(record["algo"])
    tensorboard = str(run.path / "tensorboard") if settings.tensorboard else None
    kwargs = {**record["hyperparams"], "policy_kwargs": config.policy_kwargs(record["hyperparams"].get(
        "policy_kwargs"))}
    if record["checkpoint"] is None:
        if record.get("trained_agent") is not None:
            return _from_trained_agent(record, venv, algo, tensorboard, kwargs)
        if record["normalize"] is not None:
            venv = VecNormalize(venv, **record["normalize"])
        return algo(record["policy"], venv, seed=record["seed"], device="cpu", tensorboard_log=tensorboard,
                    verbose=0, **kwargs)
    model_path, stats_path, buffer_path = (run.path / p for p in checkpoint_paths(record["checkpoint"]))
    if record["normalize"] is not None:
        venv = VecNormalize.load(str(stats_path), venv)
    model = algo.load(model_path, env=venv, device="cpu", tensorboard_log=tensorboard)
    if buffer_path.is_file() and hasattr(model, "load_replay_buffer"):
        model.load_replay_buffer(buffer_path)
    return model


def _from_trained_agent(record: dict[str, Any], venv, algo, tensorboard: str | None, kwargs: dict[str, Any]):
    """The trained agent's network and observation statistics (both go on learning), with this run's
    hyperparameters and seed, its timestep count started at zero."""
    from stable_baselines3.common.vec_env import VecNormalize

    source = RunFolder.open(record["trained_agent"]["path"])
    if source.fingerprint() != record["trained_agent"]["fingerprint"]:
        raise RunFolderError(f"the trained agent {source.path} has changed since this run started from it")
    model_path, stats_path = source.policy_files()
    if stats_path is not None:
        venv = VecNormalize.load(str(stats_path), venv)
        venv.training = True
    model = algo.load(model_path, env=venv, device="cpu", tensorboard_log=tensorboard, **kwargs)
    model.set_random_seed(record["seed"])
    model.num_timesteps = 0
    return model


def train(settings: TrainSettings, resume: bool = False) -> RunFolder:
    """Train into ``settings.out``; with ``resume``, continue the run there from its latest checkpoint.

    A keyboard interrupt saves a checkpoint at the current step before it propagates.
    """
    require_training_extra()
    import torch

    torch.set_num_threads(1)  # small MLPs: one thread is fastest, and leaves the other core to the physics
    if resume:
        run = RunFolder.open(settings.out)
        if settings.timesteps is not None:
            run = run.write_record(timesteps_target=settings.timesteps, finished=False)
    else:
        run = _new_run(settings)
    model = _build(run, settings)
    checkpoints = _Checkpoints(run, settings.checkpoint_every, settings.progress, time.perf_counter())
    remaining = run.record["timesteps_target"] - model.num_timesteps
    try:
        if remaining > 0:
            model.learn(remaining, callback=checkpoints.callback, reset_num_timesteps=False,
                        tb_log_name="run")
    except KeyboardInterrupt:
        checkpoints.close()
        checkpoints.save(model)
        print(f"\ninterrupted: checkpoint at {model.num_timesteps} timesteps saved in {run.path}; "
              f"continue with --resume", file=sys.stderr)
        raise
    checkpoints.save(model)
    run = checkpoints.run
    save_model(model, run.path / MODEL_FILE)
    normalizer = model.get_vec_normalize_env()
    if normalizer is not None:
        save_pickle(normalizer, run.path / STATS_FILE)
    model.get_env().close()
    return run.write_record(finished=True)
